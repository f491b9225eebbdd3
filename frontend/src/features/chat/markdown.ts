// The chat's Markdown: marked (GitHub-flavoured Markdown) parses the model's text, highlight.js
// colours code blocks, and DOMPurify cleans the HTML before it is inserted. Two layers keep the
// model's text from becoming markup: raw HTML in the text is rendered as text (a model that
// writes <script> in prose means the characters), and whatever the renderer emits passes an
// allow-list of tags and attributes. Links open only http(s) URLs; images are never loaded
// (a model-chosen image URL is a tracking pixel or a data: payload), they show as links.

import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked, type Tokens } from 'marked';

// The languages a coding agent's replies mostly hold; the core alone keeps the bundle small
// (all of highlight.js's 190 languages would add ~900 KB). Aliases come with each (sh, zsh,
// js, ts, py, yml, html, golang, …).
const LANGUAGES = { bash, css, diff, go, javascript, json, python, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

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

/** Only absolute http(s) URLs become links: no javascript:, data:, mailto: or relative ones. */
function isWebUrl(url: string): boolean {
  return /^https?:\/\/[^\s]+$/i.test(url);
}

/** A fence's language word, kept only if it is a plain name (it lands in a class attribute). */
function languageOf(info: string | undefined): string {
  const word = (info ?? '').trim().split(/\s+/)[0] ?? '';
  return /^[\w+#.-]{1,32}$/.test(word) ? word : '';
}

function highlighted(code: string, lang: string): string {
  if (lang && hljs.getLanguage(lang)) {
    try {
      return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    } catch {
      // Best effort: an error in a grammar leaves the code plain.
    }
  }
  return escapeHtml(code);
}

const marked = new Marked({
  gfm: true,
  breaks: true, // a single newline in a reply is a line break, as the model means it
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    link({ href, tokens, raw }: Tokens.Link): string {
      if (!isWebUrl(href)) return escapeHtml(raw);
      const label = this.parser.parseInline(tokens);
      return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer nofollow">${label}</a>`;
    },
    image({ href, text, raw }: Tokens.Image): string {
      if (!isWebUrl(href)) return escapeHtml(raw);
      return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer nofollow">${escapeHtml(text || href)}</a>`;
    },
    code({ text, lang }: Tokens.Code): string {
      const name = languageOf(lang);
      const cls = name ? ` class="hljs language-${name}"` : '';
      const label = name ? `<span class="md-lang">${name}</span>` : '';
      return (
        `<div class="md-code">${label}<button type="button" class="md-copy" data-copy>Copy</button>` +
        `<pre><code${cls}>${highlighted(text, name)}</code></pre></div>`
      );
    },
  },
});

/** Every tag and attribute the renderer writes; DOMPurify drops anything else. */
const ALLOWED_TAGS = [
  'p', 'br', 'code', 'pre', 'div', 'span', 'button', 'strong', 'em', 'del', 'a', 'ul', 'ol', 'li',
  'blockquote', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th',
  'td', 'input',
];
const ALLOWED_ATTR = ['href', 'target', 'rel', 'class', 'start', 'type', 'checked', 'disabled', 'align', 'data-copy'];

let hooked = false;

/** Renders Markdown to HTML that is safe to insert. */
export function renderMarkdown(src: string): string {
  if (!hooked) {
    // A last word on links, whatever produced them: web URLs only, opened apart from the app.
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        if (!isWebUrl(node.getAttribute('href') ?? '')) node.removeAttribute('href');
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
      if (node.tagName === 'INPUT' && node.getAttribute('type') !== 'checkbox') node.remove();
    });
    hooked = true;
  }
  const html = marked.parse(src.replace(/\r\n?/g, '\n').replaceAll('\u0000', ''), { async: false });
  return DOMPurify.sanitize(html, { ALLOWED_TAGS, ALLOWED_ATTR, ALLOW_DATA_ATTR: false }).trim();
}
