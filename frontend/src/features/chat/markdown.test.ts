import { describe, expect, it } from 'vitest';
import { escapeHtml, renderMarkdown } from './markdown';

/** Every tag name the output holds. */
function tags(html: string): string[] {
  return [...html.matchAll(/<\/?([a-z0-9]+)/gi)].map((m) => m[1].toLowerCase());
}

const ALLOWED = new Set(['p', 'br', 'code', 'pre', 'div', 'span', 'button', 'strong', 'em', 'del', 'a', 'ul', 'ol', 'li', 'blockquote', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

describe('renderMarkdown: escaping', () => {
  it('keeps HTML in the text as text', () => {
    const html = renderMarkdown('Hi <script>alert("x")</script> & <img src=x onerror=alert(1)>');
    expect(html).toBe('<p>Hi &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;</p>');
    expect(tags(html)).toEqual(['p', 'p']);
  });

  it('escapes inside code spans, code blocks, emphasis, lists and link labels', () => {
    const html = renderMarkdown(
      ['`<b>`', '**<i>bold</i>**', '- <li>item', '[<svg onload=x>](https://e.com)', '```html', '<script>x()</script>', '```'].join('\n'),
    );
    expect(html).not.toMatch(/<(script|svg|img|i|b)[\s>]/);
    expect(html).toContain('<code>&lt;b&gt;</code>');
    expect(html).toContain('<strong>&lt;i&gt;bold&lt;/i&gt;</strong>');
    expect(html).toContain('&lt;script&gt;x()&lt;/script&gt;');
    for (const t of tags(html)) expect(ALLOWED.has(t), t).toBe(true);
  });

  it('cannot be broken out of with NUL placeholders or quotes in URLs', () => {
    const html = renderMarkdown('\u00000\u0000 [x](https://e.com/"onmouseover="alert(1)) https://e.com/a"b');
    expect(html).not.toContain('\u0000');
    expect(html).not.toMatch(/"\s*onmouseover=/);
    expect(html).toContain('href="https://e.com/&quot;onmouseover=&quot;alert(1"');
  });

  it('escapeHtml covers the five characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

describe('renderMarkdown: links', () => {
  it('links only http and https URLs', () => {
    expect(renderMarkdown('[docs](https://example.com/a?b=1&c=2)')).toBe(
      '<p><a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer nofollow">docs</a></p>',
    );
    expect(renderMarkdown('[plain](http://example.com)')).toContain('href="http://example.com"');
    for (const bad of ['javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'data:text/html,x', '/relative', 'ftp://e.com', 'vbscript:x']) {
      const html = renderMarkdown(`[click](${bad})`);
      expect(html, bad).not.toContain('<a');
      expect(html, bad).toContain('[click]');
    }
  });

  it('links bare URLs, leaving trailing punctuation out', () => {
    const html = renderMarkdown('See https://example.com/x, or (https://example.org).');
    expect(html).toContain('<a href="https://example.com/x" ');
    expect(html).toContain('>https://example.com/x</a>,');
    expect(html).toContain('<a href="https://example.org" ');
    expect(renderMarkdown('not javascript://x')).not.toContain('<a');
  });
});

describe('renderMarkdown: blocks', () => {
  it('splits paragraphs on blank lines and keeps single newlines', () => {
    expect(renderMarkdown('one\ntwo\n\nthree')).toBe('<p>one<br>two</p><p>three</p>');
  });

  it('renders fenced code blocks verbatim, with the language', () => {
    const html = renderMarkdown('Run:\n```sh\necho **not bold** `x`\n\n  indented\n```\nafter');
    expect(html).toContain('<pre><code class="language-sh">echo **not bold** `x`\n\n  indented</code></pre>');
    expect(html).toContain('<span class="md-lang">sh</span>');
    expect(html.startsWith('<p>Run:</p>')).toBe(true);
    expect(html.endsWith('<p>after</p>')).toBe(true);
  });

  it('runs an unclosed fence to the end, as while a reply streams', () => {
    expect(renderMarkdown('```\nline 1\nline 2')).toContain('<pre><code>line 1\nline 2</code></pre>');
  });

  it('accepts ~~~ fences and does not close on a different marker', () => {
    expect(renderMarkdown('~~~\na\n```\nb\n~~~')).toContain('<code>a\n```\nb</code>');
  });

  it('renders bullet and numbered lists', () => {
    expect(renderMarkdown('- a\n- **b**\n* c')).toBe('<ul><li>a</li><li><strong>b</strong></li><li>c</li></ul>');
    expect(renderMarkdown('1. one\n2. two')).toBe('<ol><li>one</li><li>two</li></ol>');
    expect(renderMarkdown('3. three\n4. four')).toBe('<ol start="3"><li>three</li><li>four</li></ol>');
  });

  it('renders headings, quotes and rules', () => {
    expect(renderMarkdown('## Title ##')).toBe('<h2>Title</h2>');
    expect(renderMarkdown('# C#')).toBe('<h1>C#</h1>');
    expect(renderMarkdown('> quoted *text*')).toBe('<blockquote><p>quoted <em>text</em></p></blockquote>');
    expect(renderMarkdown('a\n\n---\n\nb')).toBe('<p>a</p><hr><p>b</p>');
  });
});

describe('renderMarkdown: inline', () => {
  it('renders code spans without emphasis inside them', () => {
    expect(renderMarkdown('use `a*b*c` and `` x`y ``')).toBe('<p>use <code>a*b*c</code> and <code>x`y</code></p>');
  });

  it('renders bold, italic and strike, leaving snake_case alone', () => {
    expect(renderMarkdown('**b** *i* _i2_ __b2__ ~~s~~ snake_case_name 2 * 3 * 4')).toBe(
      '<p><strong>b</strong> <em>i</em> <em>i2</em> <strong>b2</strong> <del>s</del> snake_case_name 2 * 3 * 4</p>',
    );
  });

  it('keeps a code span inside a link label', () => {
    expect(renderMarkdown('[`cfg`](https://e.com)')).toContain('><code>cfg</code></a>');
  });
});
