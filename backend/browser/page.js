// The helper installed in a page before the agent acts on it: finding elements (the locator
// fallback chain), describing them, numbering them for annotated screenshots, and reading the
// page. It never fakes input: clicks and keys come from the DevTools protocol as trusted events.
(() => {
  if (window.__clusterspace && window.__clusterspace.version === 1) return;
  const cs = { version: 1, target: null, marked: [] };
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const clip = (s, n) => (s.length > n ? s.slice(0, n) + '…' : s);
  const lower = (s) => norm(s).toLowerCase();

  cs.interactive = 'a[href], button, input:not([type=hidden]), select, textarea, summary, ' +
    '[role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=menuitem], [role=option], ' +
    '[role=switch], [role=combobox], [role=textbox], [role=searchbox], [onclick], ' +
    '[tabindex]:not([tabindex="-1"]), [contenteditable=""], [contenteditable=true]';

  cs.visible = (el) => {
    if (!el || !el.isConnected || !(el instanceof Element)) return false;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    const st = getComputedStyle(el);
    return st.visibility !== 'hidden' && st.visibility !== 'collapse' && st.display !== 'none' && parseFloat(st.opacity || '1') > 0;
  };

  cs.role = (el) => {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit.split(/\s+/)[0].toLowerCase();
    const tag = el.tagName.toLowerCase();
    switch (tag) {
      case 'a': case 'area': return el.hasAttribute('href') ? 'link' : '';
      case 'button': case 'summary': return 'button';
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'option': return 'option';
      case 'img': return 'img';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'li': return 'listitem';
      case 'ul': case 'ol': return 'list';
      case 'nav': return 'navigation';
      case 'dialog': return 'dialog';
      case 'input': {
        const t = (el.getAttribute('type') || 'text').toLowerCase();
        if (['button', 'submit', 'reset', 'image'].includes(t)) return 'button';
        if (t === 'checkbox') return 'checkbox';
        if (t === 'radio') return 'radio';
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return 'searchbox';
        if (t === 'hidden' || t === 'file') return '';
        return 'textbox';
      }
    }
    return el.isContentEditable ? 'textbox' : '';
  };

  // name approximates the accessible name: what a person would call the element.
  cs.name = (el) => {
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const t = norm(by.split(/\s+/).map((id) => document.getElementById(id)).filter(Boolean).map((e) => e.innerText || e.textContent).join(' '));
      if (t) return t;
    }
    const al = norm(el.getAttribute('aria-label'));
    if (al) return al;
    if (el.labels && el.labels.length) {
      const t = norm(Array.from(el.labels).map((l) => l.innerText || l.textContent).join(' '));
      if (t) return t;
    }
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute('type') || '').toLowerCase();
    if (tag === 'input' && ['button', 'submit', 'reset'].includes(type)) return norm(el.value) || (type === 'submit' ? 'Submit' : '');
    if (tag === 'img' || (tag === 'input' && type === 'image')) return norm(el.getAttribute('alt'));
    if (!['input', 'textarea', 'select'].includes(tag)) {
      const text = norm(el.innerText || el.textContent);
      if (text) return text;
    }
    return norm(el.getAttribute('title') || el.getAttribute('placeholder') || '');
  };

  // cssPath is a selector that finds el again: its id if unique, else a short nth-of-type chain.
  cs.cssPath = (el) => {
    if (el.id && document.querySelectorAll('#' + CSS.escape(el.id)).length === 1) return '#' + CSS.escape(el.id);
    const parts = [];
    for (let e = el; e && e.nodeType === 1 && e !== document.documentElement; e = e.parentElement) {
      if (e.id && document.querySelectorAll('#' + CSS.escape(e.id)).length === 1) { parts.unshift('#' + CSS.escape(e.id)); break; }
      let part = e.tagName.toLowerCase();
      const same = e.parentElement ? Array.from(e.parentElement.children).filter((c) => c.tagName === e.tagName) : [];
      if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(e) + 1) + ')';
      parts.unshift(part);
      if (parts.length >= 5) break;
    }
    return parts.join(' > ');
  };

  cs.describe = (el) => {
    const r = el.getBoundingClientRect();
    const tag = el.tagName.toLowerCase();
    const d = { tag, role: cs.role(el), name: clip(cs.name(el), 100), text: clip(norm(el.innerText || el.textContent), 200),
      selector: cs.cssPath(el), visible: cs.visible(el),
      x: Math.round(r.left), y: Math.round(r.top), width: Math.round(r.width), height: Math.round(r.height) };
    if (el.id) d.id = el.id;
    const type = el.getAttribute('type');
    if (type) d.type = type.toLowerCase();
    if (tag === 'a' && el.href) d.href = el.href;
    if (['input', 'textarea', 'select'].includes(tag) && d.type !== 'password' && typeof el.value === 'string') d.value = clip(el.value, 200);
    if (d.type === 'checkbox' || d.type === 'radio' || el.getAttribute('aria-checked')) d.checked = el.checked === true || el.getAttribute('aria-checked') === 'true';
    if (el.disabled || el.getAttribute('aria-disabled') === 'true') d.disabled = true;
    return d;
  };

  const query = (selector) => {
    try {
      return { els: Array.from(document.querySelectorAll(selector)) };
    } catch (e) {
      return { error: 'invalid CSS selector ' + JSON.stringify(selector) + ': ' + e.message };
    }
  };

  const best = (els, want) => els.find((e) => lower(cs.name(e)) === want) || els.find((e) => lower(cs.name(e)).includes(want));

  // find walks the fallback chain: selector → aria-label → role + text → visible text.
  cs.find = (spec) => {
    const tried = [];
    if (spec.selector) {
      const q = query(spec.selector);
      if (q.error) return q;
      const el = q.els.find(cs.visible) || q.els[0];
      if (el) return { el, strategy: 'selector' };
      tried.push('selector ' + JSON.stringify(spec.selector));
    }
    const label = spec.ariaLabel || spec.text;
    if (label) {
      const want = lower(label);
      const all = Array.from(document.querySelectorAll('[aria-label]')).filter(cs.visible);
      const el = all.find((e) => lower(e.getAttribute('aria-label')) === want) || all.find((e) => lower(e.getAttribute('aria-label')).includes(want));
      if (el) return { el, strategy: 'aria-label' };
      tried.push('aria-label ' + JSON.stringify(label));
    }
    const text = spec.text || spec.ariaLabel || '';
    if (spec.role || text) {
      const role = lower(spec.role);
      const cands = Array.from(document.querySelectorAll(role ? '*' : cs.interactive))
        .filter((e) => cs.visible(e) && (role ? cs.role(e) === role : cs.role(e) !== ''));
      const el = text ? best(cands, lower(text)) : cands[0];
      if (el) return { el, strategy: 'role+text' };
      tried.push('role ' + (role || '(any interactive)') + (text ? ' named ' + JSON.stringify(text) : ''));
    }
    if (text) {
      const want = lower(text);
      const hits = [];
      for (const e of document.body ? document.body.querySelectorAll('*') : []) {
        if (!cs.visible(e) || ['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(e.tagName)) continue;
        const t = lower(e.innerText);
        if (!t.includes(want)) continue;
        // The deepest element holding the text: no visible child holds it too.
        if (Array.from(e.children).some((c) => cs.visible(c) && lower(c.innerText).includes(want))) continue;
        hits.push(e);
      }
      const el = hits.find((e) => lower(e.innerText) === want) || hits[0];
      if (el) return { el: el.closest(cs.interactive) || el, strategy: 'text' };
      tried.push('visible text ' + JSON.stringify(text));
    }
    return { error: 'no element found: tried ' + (tried.join(', then ') || 'nothing (give a selector, aria_label, role or text)') };
  };

  // aim scrolls el into view and returns the point a real click would hit, and what covers it.
  cs.aim = (el, strategy) => {
    cs.target = el;
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const r = el.getBoundingClientRect();
    const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
    const out = { strategy, element: cs.describe(el), x, y };
    const hit = document.elementFromPoint(x, y);
    const label = hit && hit.closest ? hit.closest('label') : null;
    if (hit && hit !== el && !el.contains(hit) && !(label && label.control === el)) out.covered = cs.describe(hit);
    return out;
  };

  cs.locate = (spec) => {
    const f = cs.find(spec);
    return f.el ? cs.aim(f.el, f.strategy) : { error: f.error };
  };

  // secretField says why the field typing would go to (the located one, or the focused one
  // without a locator) holds a secret — a password, a card number, a one-time code — or ''.
  cs.secretField = (spec) => {
    const el = spec.selector || spec.ariaLabel || spec.text ? cs.find(spec).el : document.activeElement;
    if (!el || el === document.body) return '';
    const what = cs.describe(el);
    const name = what.name || el.getAttribute('name') || el.id || el.tagName.toLowerCase();
    if (lower(el.getAttribute('type')) === 'password') return 'a password field (' + JSON.stringify(name) + ')';
    const ac = lower(el.getAttribute('autocomplete'));
    if (/password|cc-number|cc-csc|one-time-code/.test(ac)) return 'a field for ' + ac + ' (' + JSON.stringify(name) + ')';
    const ident = lower((el.getAttribute('name') || '') + ' ' + el.id);
    if (/pass(word|wd|code)?\b|pwd|\bpin\b|cvv|cvc|secret|otp\b/.test(ident)) return 'a field that looks like it takes a secret (' + JSON.stringify(name) + ')';
    return '';
  };

  cs.locateIndex = (i) => {
    const el = cs.marked[i - 1];
    if (!el || !el.isConnected) {
      return { error: 'no element ' + i + ' from the last annotated screenshot' + (cs.marked.length ? ' (it had ' + cs.marked.length + ', and this one is gone)' : ' (take one with browser_screenshot_annotated first; a navigation forgets them)') };
    }
    return cs.aim(el, 'index');
  };

  // focusTarget focuses the located element and selects its content so typing replaces it.
  cs.focusTarget = (clear) => {
    const el = cs.target;
    if (!el || !el.isConnected) return { error: 'the element is gone' };
    el.focus();
    if (document.activeElement !== el && !el.contains(document.activeElement)) return { error: 'the element cannot take keyboard focus: ' + JSON.stringify(cs.describe(el).name || el.tagName.toLowerCase()) };
    if (clear) {
      if (typeof el.select === 'function' && 'value' in el) el.select();
      else if (el.isContentEditable) { const r = document.createRange(); r.selectNodeContents(el); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }
    }
    return { ok: true, hasSelection: clear && ((typeof el.value === 'string' && el.value.length > 0) || (el.isContentEditable && norm(el.innerText) !== '')) };
  };

  cs.targetValue = () => {
    const el = cs.target;
    if (!el || !el.isConnected) return '';
    return typeof el.value === 'string' && el.type !== 'password' ? el.value : norm(el.innerText);
  };

  cs.annotate = (limit) => {
    cs.clearMarks();
    const inView = (r) => r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
    let els = Array.from(document.querySelectorAll(cs.interactive)).filter((e) => {
      if (!cs.visible(e) || !inView(e.getBoundingClientRect())) return false;
      const r = e.getBoundingClientRect();
      const hit = document.elementFromPoint(Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1), Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1));
      const label = hit && hit.closest ? hit.closest('label') : null;
      return hit && (hit === e || e.contains(hit) || (label && label.control === e));
    });
    // An element inside another numbered one (a span with tabindex inside a button) is the same target.
    els = els.filter((e) => !els.some((o) => o !== e && o.contains(e)));
    els = els.slice(0, limit);
    cs.marked = els;
    const layer = document.createElement('div');
    layer.id = '__clusterspace_marks';
    layer.style.cssText = 'position:fixed;left:0;top:0;width:0;height:0;pointer-events:none;z-index:2147483647';
    const colors = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#800000'];
    els.forEach((e, i) => {
      const r = e.getBoundingClientRect();
      const c = colors[i % colors.length];
      const box = document.createElement('div');
      box.style.cssText = `position:fixed;left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px;border:2px solid ${c};box-sizing:border-box;`;
      const tag = document.createElement('div');
      tag.textContent = String(i + 1);
      tag.style.cssText = `position:fixed;left:${Math.max(r.left - 2, 0)}px;top:${Math.max(r.top - 16, 0)}px;background:${c};color:#fff;font:bold 12px/14px sans-serif;padding:1px 3px;border-radius:3px;`;
      layer.append(box, tag);
    });
    document.documentElement.appendChild(layer);
    return els.map((e, i) => Object.assign({ index: i + 1 }, cs.describe(e)));
  };

  cs.clearMarks = () => {
    const l = document.getElementById('__clusterspace_marks');
    if (l) l.remove();
  };

  cs.query = (selector, limit) => {
    const q = query(selector);
    if (q.error) return q;
    return { count: q.els.length, items: q.els.slice(0, limit).map(cs.describe) };
  };

  cs.selectorState = (selector) => {
    const q = query(selector);
    if (q.error) return q;
    const vis = q.els.filter(cs.visible);
    return { count: q.els.length, visible: vis.length, first: (vis[0] || q.els[0]) ? cs.describe(vis[0] || q.els[0]) : null };
  };

  cs.select = (selector, values) => {
    const q = query(selector);
    if (q.error) return q;
    const el = q.els[0];
    if (!el) return { error: 'no element matches ' + JSON.stringify(selector) };
    if (el.tagName !== 'SELECT') return { error: JSON.stringify(selector) + ' is a <' + el.tagName.toLowerCase() + '>, not a <select>: click it instead' };
    const opts = Array.from(el.options);
    const picked = [];
    for (const v of values) {
      const o = opts.find((o) => o.value === v) || opts.find((o) => lower(o.label) === lower(v)) || opts.find((o) => lower(o.label).includes(lower(v)));
      if (!o) return { error: 'no option ' + JSON.stringify(v) + '; the options are ' + opts.map((o) => JSON.stringify(o.label) + (o.value !== o.label ? ' (value ' + JSON.stringify(o.value) + ')' : '')).join(', ') };
      picked.push(o);
    }
    if (!el.multiple && picked.length > 1) return { error: 'this <select> takes one option, not ' + picked.length };
    // A native <select> opens an OS popup that protocol input cannot drive, so the choice is
    // made the way a person's would land: the option selected, then input and change events.
    el.focus();
    opts.forEach((o) => { o.selected = picked.includes(o); });
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return { selected: picked.map((o) => o.label) };
  };

  cs.scrollState = () => ({ x: Math.round(scrollX), y: Math.round(scrollY),
    maxX: Math.max(0, document.documentElement.scrollWidth - innerWidth), maxY: Math.max(0, document.documentElement.scrollHeight - innerHeight) });

  cs.text = () => (document.body ? document.body.innerText : document.documentElement.innerText || '');

  // moneySignals is the text the money gate reads: title, visible text, and payment fields.
  cs.moneySignals = () => {
    const fields = Array.from(document.querySelectorAll('input, select')).map((e) => [e.getAttribute('autocomplete'), e.name, e.id].filter(Boolean).join(' ')).filter((s) => /cc-|card|cvc|cvv|iban|routing/i.test(s));
    return document.title + '\n' + cs.text().slice(0, 20000) + (fields.length ? '\n[payment fields: ' + fields.join(', ') + ']' : '');
  };

  Object.defineProperty(window, '__clusterspace', { value: cs, configurable: true });
})();
