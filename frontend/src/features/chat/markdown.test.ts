// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { escapeHtml, renderMarkdown } from './markdown';

/** Every tag name the output holds. */
function tags(html: string): string[] {
  return [...html.matchAll(/<\/?([a-z0-9]+)/gi)].map((m) => m[1].toLowerCase());
}

const ALLOWED = new Set(['p', 'br', 'code', 'pre', 'div', 'span', 'button', 'strong', 'em', 'del', 'a', 'ul', 'ol', 'li', 'blockquote', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/** The output without the newlines marked puts between block tags (they render as nothing). */
function flat(html: string): string {
  return html.replace(/>\n</g, '><');
}

/** The output parsed as the page would parse it. */
function dom(html: string): HTMLElement {
  const el = document.createElement('div');
  el.innerHTML = html;
  return el;
}

/** Fails if the parsed output holds anything that runs script or loads a resource. */
function expectInert(html: string) {
  const el = dom(html);
  expect(el.querySelectorAll('script, style, iframe, object, embed, svg, math, img, video, audio, form, link, meta, base').length, html).toBe(0);
  for (const node of el.querySelectorAll('*')) {
    for (const attr of node.attributes) {
      expect(attr.name.startsWith('on'), `${attr.name} in ${html}`).toBe(false);
      expect(['style', 'src', 'srcset', 'action', 'formaction', 'xlink:href'].includes(attr.name), `${attr.name} in ${html}`).toBe(false);
    }
    const href = node.getAttribute('href');
    if (href !== null) expect(href, html).toMatch(/^https?:\/\//i);
  }
}

describe('renderMarkdown: escaping', () => {
  it('keeps HTML in the text as text', () => {
    const html = renderMarkdown('Hi <script>alert("x")</script> & <img src=x onerror=alert(1)>');
    // The sanitizer re-serialises through the DOM, which writes quotes in text as they are.
    expect(html).toBe('<p>Hi &lt;script&gt;alert("x")&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;</p>');
    expectInert(html);
    expect(tags(html)).toEqual(['p', 'p']);
  });

  it('escapes inside code spans, code blocks, emphasis, lists and link labels', () => {
    const html = renderMarkdown(
      ['`<b>`', '**<i>bold</i>**', '- <li>item', '[<svg onload=x>](https://e.com)', '```html', '<script>x()</script>', '```'].join('\n'),
    );
    expect(html).not.toMatch(/<(script|svg|img|i|b)[\s>]/);
    expect(html).toContain('<code>&lt;b&gt;</code>');
    expect(html).toContain('<strong>&lt;i&gt;bold&lt;/i&gt;</strong>');
    // Highlighted, the code is split into spans: its text is what must survive as text.
    expect(dom(html).querySelector('pre code')?.textContent).toBe('<script>x()</script>');
    for (const t of tags(html)) expect(ALLOWED.has(t), t).toBe(true);
    expectInert(html);
  });

  it('cannot be broken out of with NUL placeholders or quotes in URLs', () => {
    const html = renderMarkdown('\u00000\u0000 [x](https://e.com/"onmouseover="alert(1)) https://e.com/a"b');
    expect(html).not.toContain('\u0000');
    expect(html).not.toMatch(/"\s*onmouseover=/);
    // marked reads the destination with its balanced parentheses, as CommonMark says.
    expect(html).toContain('href="https://e.com/&quot;onmouseover=&quot;alert(1)"');
    const a = dom(html).querySelector('a')!;
    expect([...a.attributes].map((x) => x.name)).toEqual(['href', 'target', 'rel']);
    expectInert(html);
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
    expect(flat(renderMarkdown('one\ntwo\n\nthree'))).toBe('<p>one<br>two</p><p>three</p>');
  });

  it('renders fenced code blocks verbatim, with the language', () => {
    const html = renderMarkdown('Run:\n```sh\necho **not bold** `x`\n\n  indented\n```\nafter');
    expect(html).toContain('<pre><code class="hljs language-sh">');
    expect(dom(html).querySelector('pre code')?.textContent).toBe('echo **not bold** `x`\n\n  indented');
    expect(dom(html).querySelector('pre code strong')).toBeNull();
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
    // A change of bullet character starts a new list (CommonMark).
    expect(flat(renderMarkdown('- a\n- **b**\n* c'))).toBe('<ul><li>a</li><li><strong>b</strong></li></ul><ul><li>c</li></ul>');
    expect(flat(renderMarkdown('1. one\n2. two'))).toBe('<ol><li>one</li><li>two</li></ol>');
    expect(flat(renderMarkdown('3. three\n4. four'))).toBe('<ol start="3"><li>three</li><li>four</li></ol>');
  });

  it('renders headings, quotes and rules', () => {
    expect(flat(renderMarkdown('## Title ##'))).toBe('<h2>Title</h2>');
    expect(flat(renderMarkdown('# C#'))).toBe('<h1>C#</h1>');
    expect(flat(renderMarkdown('> quoted *text*'))).toBe('<blockquote><p>quoted <em>text</em></p></blockquote>');
    expect(flat(renderMarkdown('a\n\n---\n\nb'))).toBe('<p>a</p><hr><p>b</p>');
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

describe('renderMarkdown: known-dangerous inputs', () => {
  // Each is a way Markdown renderers have been made to run script or load things; none may.
  const cases: Record<string, string> = {
    'javascript: link': '[x](javascript:alert(1))',
    'javascript: link, entity-encoded': '[x](&#106;avascript:alert(1))',
    'javascript: link, tab inside': '[x](java\tscript:alert(1))',
    'javascript: link, angle brackets': '[x](<javascript:alert(1)>)',
    'javascript: autolink': '<javascript:alert(1)>',
    'javascript: reference link': '[x][r]\n\n[r]: javascript:alert(1)',
    'vbscript: link': '[x](vbscript:msgbox(1))',
    'data: link': '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
    'data: image': '![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)',
    'image with onerror': '![x" onerror="alert(1)](https://e.com/x.png)',
    'remote image': '![pixel](https://tracker.example/p.gif)',
    'raw script block': '<script>alert(1)</script>',
    'raw HTML block': '<div onclick="alert(1)">\n\n*x*\n\n</div>',
    'raw img': '<img src=x onerror=alert(1)>',
    'SVG with script': '<svg><script>alert(1)</script></svg>',
    'SVG onload': '<svg onload=alert(1)>',
    'SVG in a link label': '[<svg/onload=alert(1)>](https://e.com)',
    'iframe': '<iframe src="javascript:alert(1)"></iframe>',
    'style': '<style>*{display:none}</style>',
    'on* attribute in a link title': '[x](https://e.com "a\" onmouseover=\"alert(1)")',
    'form': '<form action="https://e.com"><button formaction="javascript:alert(1)">x</button></form>',
    'math/mathml': '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
    'code fence language breaking out': '```"><img src=x onerror=alert(1)>\nx\n```',
    'HTML comment hiding a tag': '<!--><img src=x onerror=alert(1)>-->',
    'meta refresh': '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    'base href': '<base href="javascript:alert(1)//">',
    'mailto link': '[mail](mailto:a@e.com)',
  };
  for (const [name, src] of Object.entries(cases)) {
    it(name, () => {
      const html = renderMarkdown(src);
      expectInert(html);
      for (const t of tags(html)) expect(ALLOWED.has(t), `${t} in ${html}`).toBe(true);
    });
  }

  it('shows raw HTML as the text the model wrote', () => {
    expect(dom(renderMarkdown('<b>bold?</b>')).textContent).toBe('<b>bold?</b>');
    expect(dom(renderMarkdown('<svg onload=alert(1)>')).textContent).toBe('<svg onload=alert(1)>');
  });

  it('shows an image as a link to it, never loads it', () => {
    const a = dom(renderMarkdown('![chart](https://e.com/c.png)')).querySelector('a')!;
    expect(a.getAttribute('href')).toBe('https://e.com/c.png');
    expect(a.textContent).toBe('chart');
  });

  it('highlights known languages and leaves others plain', () => {
    expect(renderMarkdown('```go\nfunc main() {}\n```')).toContain('<span class="hljs-keyword">func</span>');
    const plain = renderMarkdown('```cobol\nDISPLAY "x"\n```');
    expect(plain).not.toContain('hljs-');
    expect(dom(plain).querySelector('code')?.textContent).toBe('DISPLAY "x"');
  });
});
