// A small Markdown renderer for the chat's model text. The text is HTML-escaped before any
// markup is recognised, so nothing the model writes can become a tag or an attribute: the only
// tags in the output are the ones this file writes, and the only URLs are http(s) links.
//
// Supported: paragraphs (single newlines kept as line breaks), fenced code blocks (``` or ~~~,
// unclosed ones run to the end, as while a reply streams), `inline code`, **bold**, *italic*,
// ~~strike~~, headings, bullet and numbered lists (one level), block quotes, horizontal rules,
// [links](https://…) and bare https:// URLs. Anything else stays text.

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Placeholders for inline pieces already rendered; NUL never survives into the input. */
const HOLE = '\u0000';
const HOLE_REF = /\u0000(\d+)\u0000/g;

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const BULLET = /^ {0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^ {0,3}&gt;\s?(.*)$/;

/** Renders Markdown to HTML that is safe to insert: every character of `src` is escaped. */
export function renderMarkdown(src: string): string {
  const lines = escapeHtml(src.replace(/\r\n?/g, '\n').replaceAll(HOLE, '')).split('\n');
  return renderBlocks(lines);
}

function renderBlocks(lines: string[]): string {
  const out: string[] = [];
  let para: string[] = [];
  const flushPara = () => {
    if (para.length) out.push(`<p>${para.map(inline).join('<br>')}</p>`);
    para = [];
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flushPara();
      const marker = fence[1];
      const body: string[] = [];
      i++;
      while (i < lines.length && !isClosingFence(lines[i], marker)) body.push(lines[i++]);
      out.push(codeBlock(body.join('\n'), fence[2]));
      continue;
    }
    if (line.trim() === '') {
      flushPara();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flushPara();
      const level = heading[1].length;
      out.push(`<h${level}>${inline(heading[2])}</h${level}>`);
      continue;
    }
    if (RULE.test(line)) {
      flushPara();
      out.push('<hr>');
      continue;
    }
    if (BULLET.test(line) || NUMBERED.test(line)) {
      flushPara();
      const ordered = !BULLET.test(line);
      const pattern = ordered ? NUMBERED : BULLET;
      const items: string[] = [];
      const start = ordered ? Number(NUMBERED.exec(line)![1]) : 1;
      while (i < lines.length) {
        const m = pattern.exec(lines[i]);
        if (m) {
          items.push(ordered ? m[2] : m[1]);
        } else if (items.length && /^\s{2,}\S/.test(lines[i])) {
          items[items.length - 1] += '\n' + lines[i].trim(); // a wrapped item continues
        } else {
          break;
        }
        i++;
      }
      i--;
      const lis = items.map((t) => `<li>${t.split('\n').map(inline).join('<br>')}</li>`).join('');
      out.push(ordered ? `<ol${start !== 1 ? ` start="${start}"` : ''}>${lis}</ol>` : `<ul>${lis}</ul>`);
      continue;
    }
    if (QUOTE.test(line)) {
      flushPara();
      const quoted: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i])) quoted.push(QUOTE.exec(lines[i++])![1]);
      i--;
      out.push(`<blockquote>${renderBlocks(quoted)}</blockquote>`);
      continue;
    }
    para.push(line);
  }
  flushPara();
  return out.join('');
}

function isClosingFence(line: string, marker: string): boolean {
  const t = line.trim();
  return t.length >= marker.length && t[0] === marker[0] && /^(`+|~+)$/.test(t);
}

function codeBlock(escapedCode: string, lang: string): string {
  const cls = lang ? ` class="language-${lang}"` : '';
  const label = lang ? `<span class="md-lang">${lang}</span>` : '';
  return (
    `<div class="md-code">${label}<button type="button" class="md-copy" data-copy>Copy</button>` +
    `<pre><code${cls}>${escapedCode}</code></pre></div>`
  );
}

/**
 * Inline markup on one escaped line: code spans and links first (their insides are left as
 * they are), then emphasis on what remains.
 */
function inline(text: string): string {
  const held: string[] = [];
  const hold = (html: string) => `${HOLE}${held.push(html) - 1}${HOLE}`;

  let s = text.replace(/(`+)([^`]|[^`].*?[^`])\1(?!`)/g, (_, _ticks, code: string) => hold(`<code>${code.trim() || code}</code>`));
  s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (whole, label: string, url: string) =>
    isWebUrl(url) ? hold(link(url, emphasis(label))) : whole,
  );
  // Bare URLs; in escaped text the only entity a URL may hold is &amp;.
  s = s.replace(/(^|[\s(])(https?:\/\/(?:&amp;|[^\s<&])*[^\s<&.,:;!?)])/g, (_, pre: string, url: string) => pre + hold(link(url, url)));
  return restore(emphasis(s), held);
}

/** Puts held pieces back; a link's label may hold a code span, so pieces nest. */
function restore(s: string, held: string[]): string {
  return s.replace(HOLE_REF, (_, n: string) => restore(held[Number(n)], held));
}

function emphasis(s: string): string {
  // An emphasised run starts and ends with a non-space character; `_` only at word edges, so
  // snake_case names stay as they are.
  return s
    .replace(/\*\*(\S(?:.*?\S)?)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(\S(?:.*?\S)?)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/(^|[^*\w])\*([^\s*](?:.*?[^\s*])?)\*(?!\*)/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_([^\s_](?:.*?[^\s_])?)_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(\S(?:.*?\S)?)~~/g, '<del>$1</del>');
}

/** Only absolute http(s) URLs become links: no javascript:, data: or relative ones. */
function isWebUrl(escapedUrl: string): boolean {
  return /^https?:\/\/[^\s]+$/i.test(escapedUrl);
}

/** url is already escaped (quotes included), so it cannot leave the attribute. */
function link(url: string, label: string): string {
  return `<a href="${url}" target="_blank" rel="noopener noreferrer nofollow">${label}</a>`;
}
