// Which renderer a new terminal gets. WebGL draws fast, but a page gets only about 16 WebGL
// contexts before the browser starts dropping the oldest, so the terminals beyond a budget use
// the DOM renderer, as does every terminal once WebGL has failed on this page.

export type RendererKind = 'webgl' | 'dom';

/**
 * Terminals that may hold a WebGL context at once. Browsers allow about 16 contexts per page;
 * 12 leaves room for the browser panes' own canvases and a context being replaced.
 */
export const MAX_WEBGL_TERMINALS = 12;

export interface RendererFacts {
  /** The page can make WebGL2 contexts at all (WebglAddon needs WebGL2). */
  webgl2: boolean;
  /** Terminals holding a WebGL context now. */
  inUse: number;
  /** WebGL failed to start on this page before: it will fail again, so do not pay for a try. */
  failedBefore: boolean;
  limit?: number;
}

export function chooseRenderer(f: RendererFacts): RendererKind {
  if (!f.webgl2 || f.failedBefore) return 'dom';
  return f.inUse < (f.limit ?? MAX_WEBGL_TERMINALS) ? 'webgl' : 'dom';
}

/** Counts the page's WebGL terminals; one per page (module level), instances for tests. */
export class WebglBudget {
  private inUse = 0;
  private failed = false;

  constructor(
    private readonly webgl2: () => boolean = hasWebgl2,
    private readonly limit = MAX_WEBGL_TERMINALS,
  ) {}

  /** Takes a WebGL slot if the choice is WebGL; call release() when the context goes away. */
  acquire(): RendererKind {
    const kind = chooseRenderer({ webgl2: this.webgl2(), inUse: this.inUse, failedBefore: this.failed, limit: this.limit });
    if (kind === 'webgl') this.inUse++;
    return kind;
  }

  release(): void {
    this.inUse = Math.max(0, this.inUse - 1);
  }

  /** WebGL could not start: give the slot back and use the DOM renderer from now on. */
  fail(): void {
    this.failed = true;
    this.release();
  }

  get count(): number {
    return this.inUse;
  }
}

function hasWebgl2(): boolean {
  return typeof WebGL2RenderingContext !== 'undefined';
}

export const webglBudget = new WebglBudget();
