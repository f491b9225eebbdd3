// One xterm.js terminal with its addons, renderer choice, clipboard keys and link handling.
// The only module that imports xterm, so unit tests (jsdom cannot run its renderers) never load it.
import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { WebglAddon } from '@xterm/addon-webgl';
import { Terminal, type ITheme } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { commandForKey, TERMINAL_KEY, TERMINAL_KEYMAP } from '../../lib/state/keymap';
import { openLink, readClipboardSelf, writeClipboard } from './clipboard';
import { webglBudget, type RendererKind, type WebglBudget } from './renderer';
import { bufferText } from './text';

/**
 * Lines xterm keeps above the screen. The backend keeps 5,000 lines and replays them on attach;
 * a little more here means a full replay plus what follows it all stay scrollable.
 */
const CLIENT_SCROLLBACK = 10_000;
/** Copy-on-select waits for the selection to settle, not one clipboard write per mouse move. */
const COPY_ON_SELECT_DELAY_MS = 150;

/** Colours of app.css, so a terminal looks like part of the app. */
const THEME: ITheme = {
  background: '#181a1f',
  foreground: '#d7dae0',
  cursor: '#5aa2ff',
  cursorAccent: '#181a1f',
  selectionBackground: 'rgba(90, 162, 255, 0.35)',
};

export interface XtermOptions {
  fontFamily: string;
  fontSize: number;
  /** What the user typed or pasted, to send to the shell. */
  onData: (data: string) => void;
  /** The renderer changed after creation (WebGL lost its context). */
  onRenderer: (kind: RendererKind) => void;
  /** Ctrl+Shift+F. */
  onFind: () => void;
  /** A click on a link printed in the terminal; by default it opens in a new browser tab. */
  onLink?: (event: MouseEvent, uri: string) => void;
  budget?: WebglBudget;
}

export class XtermView {
  readonly term: Terminal;
  renderer: RendererKind = 'dom';

  private readonly fitAddon = new FitAddon();
  private readonly search = new SearchAddon();
  private readonly budget: WebglBudget;
  private webgl: WebglAddon | null = null;
  private copyTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  /** The keydown before the next keyup, to tell a genuine keypress from a synthetic echo. */
  private lastKeydown: KeyboardEvent | null = null;

  constructor(host: HTMLElement, private readonly opts: XtermOptions) {
    this.budget = opts.budget ?? webglBudget;
    this.term = new Terminal({
      fontFamily: opts.fontFamily,
      fontSize: opts.fontSize,
      scrollback: CLIENT_SCROLLBACK,
      theme: THEME,
      // Blinks only with WebGL (see startRenderer): the DOM renderer blinks by a CSS animation,
      // which redraws the page 60 times a second for as long as the terminal has focus, and
      // Chromium holds the page's network messages after each key until the next frame is
      // drawn, so every echo waited for a frame (served UI p50 13 ms against 3 ms steady).
      cursorBlink: false,
      allowProposedApi: false,
    });
    this.term.loadAddon(this.fitAddon);
    this.term.loadAddon(this.search);
    this.term.loadAddon(new WebLinksAddon((event, uri) => (opts.onLink ? opts.onLink(event, uri) : openLink(uri))));
    this.term.open(host);
    this.startRenderer();

    this.term.onData((data) => opts.onData(data));
    this.term.onSelectionChange(() => {
      clearTimeout(this.copyTimer);
      this.copyTimer = setTimeout(() => {
        if (!this.disposed && this.term.hasSelection()) void writeClipboard(this.term.getSelection());
      }, COPY_ON_SELECT_DELAY_MS);
    });
    this.term.attachCustomKeyEventHandler((e) => this.handleKey(e));
  }

  /** WebGL when the budget allows and it starts; else (and after any failure) the DOM renderer. */
  private startRenderer(): void {
    if (this.budget.acquire() !== 'webgl') {
      this.renderer = 'dom';
      return;
    }
    try {
      const addon = new WebglAddon();
      addon.onContextLoss(() => this.dropWebgl());
      this.term.loadAddon(addon);
      this.webgl = addon;
      this.renderer = 'webgl';
      this.term.options.cursorBlink = true; // WebGL blinks on a timer: a frame every 600 ms
    } catch (err) {
      console.warn('clusterspace: WebGL terminal renderer unavailable, using the DOM renderer:', err);
      this.budget.fail();
      this.renderer = 'dom';
    }
  }

  /** The GPU took the context back (driver reset, too many contexts): carry on with the DOM. */
  private dropWebgl(): void {
    if (!this.webgl) return;
    const addon = this.webgl;
    this.webgl = null;
    this.budget.release();
    try {
      addon.dispose(); // xterm switches back to its DOM renderer
    } catch {
      // Best effort: the context is gone already.
    }
    this.renderer = 'dom';
    this.term.options.cursorBlink = false;
    this.opts.onRenderer('dom');
  }

  /** False tells xterm to leave the key alone (not turn it into input). */
  private handleKey(e: KeyboardEvent): boolean {
    if (e.type === 'keydown') this.lastKeydown = e;
    else if (e.type === 'keyup') this.lastKeydown = null;
    else if (e.type === 'keypress' && this.lastKeydown?.defaultPrevented) {
      // A browser sends no keypress for a keydown whose default was prevented (xterm prevents
      // it when it has typed the key). Synthetic keys, as the DevTools protocol sends them for
      // the end-to-end tests, still bring one, and xterm would type the key a second time.
      e.preventDefault();
      return false;
    }
    const command = commandForKey(e, TERMINAL_KEYMAP);
    if (!command) return true;
    if (e.type !== 'keydown') return false;
    switch (command) {
      case TERMINAL_KEY.copy:
        // Swallowed even without a selection: xterm would send Ctrl+C (interrupt) otherwise.
        e.preventDefault();
        if (this.term.hasSelection()) void writeClipboard(this.term.getSelection());
        return false;
      case TERMINAL_KEY.paste: {
        const read = readClipboardSelf();
        if (read) {
          e.preventDefault();
          read.then(
            (text) => !this.disposed && text && this.term.paste(text),
            () => {},
          );
        }
        // In a browser the key's default action pastes into xterm's textarea, which xterm handles.
        return false;
      }
      case TERMINAL_KEY.find:
        e.preventDefault();
        this.opts.onFind();
        return false;
    }
    return true;
  }

  /** Fits the terminal to its element; null while the element has no room (hidden, collapsed). */
  fit(): { cols: number; rows: number } | null {
    if (this.disposed) return null;
    const dims = this.fitAddon.proposeDimensions();
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows) || dims.cols < 2 || dims.rows < 1) {
      return null;
    }
    if (dims.cols !== this.term.cols || dims.rows !== this.term.rows) this.term.resize(dims.cols, dims.rows);
    return { cols: this.term.cols, rows: this.term.rows };
  }

  size(): { cols: number; rows: number } {
    return { cols: this.term.cols, rows: this.term.rows };
  }

  write(data: Uint8Array, done?: () => void): void {
    if (!this.disposed) this.term.write(data, done);
  }

  /** A blank screen and scrollback, before writing a (re)play of another screen. */
  reset(): void {
    if (this.disposed) return;
    this.search.clearDecorations();
    this.term.reset();
  }

  text(): string {
    return this.disposed ? '' : bufferText(this.term.buffer.active);
  }

  /** The cursor's position as cells from the start of the buffer: it grows by one per echoed key. */
  cursorOffset(): number {
    const b = this.term.buffer.active;
    return (b.baseY + b.cursorY) * this.term.cols + b.cursorX;
  }

  /** Calls `cb` after each write has been parsed into the buffer; returns the unsubscribe. */
  onWriteParsed(cb: () => void): () => void {
    const d = this.term.onWriteParsed(cb);
    return () => d.dispose();
  }

  setFont(family: string, size: number): void {
    if (this.disposed) return;
    if (this.term.options.fontFamily !== family) this.term.options.fontFamily = family;
    if (this.term.options.fontSize !== size) this.term.options.fontSize = size;
  }

  find(query: string, backwards = false): boolean {
    if (!query) return false;
    return backwards ? this.search.findPrevious(query) : this.search.findNext(query);
  }

  clearFind(): void {
    this.search.clearDecorations();
    this.term.clearSelection();
  }

  focus(): void {
    if (!this.disposed) this.term.focus();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.lastKeydown = null;
    clearTimeout(this.copyTimer);
    if (this.webgl) {
      this.webgl = null;
      this.budget.release();
    }
    this.term.dispose(); // disposes the addons too, freeing the WebGL context
  }
}
