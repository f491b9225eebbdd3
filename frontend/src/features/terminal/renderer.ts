// Which renderer a new terminal gets. WebGL draws fast on a GPU, but a page gets only about 16
// WebGL contexts before the browser starts dropping the oldest, so the terminals beyond a budget
// use the DOM renderer, as does every terminal once WebGL has failed on this page. Without a GPU
// (WebGL drawn by a software rasteriser such as Mesa's llvmpipe or SwiftShader) the DOM renderer
// is the fast one: in the desktop window under Xvfb a key's echo took p99 12-16 ms with WebGL
// and 6 ms with the DOM renderer (BenchmarkDesktopKeystrokeEcho), since every WebGL draw is
// rasterised on the CPU the page runs on.

export type RendererKind = 'webgl' | 'dom';

/**
 * Terminals that may hold a WebGL context at once. Browsers allow about 16 contexts per page;
 * 12 leaves room for the browser panes' own canvases and a context being replaced.
 */
export const MAX_WEBGL_TERMINALS = 12;

export interface RendererFacts {
  /** The page can make WebGL2 contexts drawn by a GPU (WebglAddon needs WebGL2). */
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
    private readonly webgl2: () => boolean = hasGpuWebgl2,
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

/** The WebGL renderer string of a software rasteriser: WebGL there is slower than the DOM. */
export function isSoftwareGL(renderer: string): boolean {
  return /llvmpipe|softpipe|swiftshader|software|swrast/i.test(renderer);
}

let gpuWebgl2: boolean | undefined;
let learned: Promise<void> | null = null;

/**
 * The app's own word on the machine's graphics, for pages that cannot tell: WebKitGTK names
 * every WebGL renderer "Apple GPU", llvmpipe included, so the desktop asks Go, which looks for
 * a GPU render node. True means WebGL would be rasterised in software. An answer that takes
 * over a second counts as no word.
 */
export function learnGraphics(softwareOnly: Promise<boolean>): void {
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000));
  learned = Promise.race([softwareOnly.catch(() => false), timeout]).then((software) => {
    if (software) gpuWebgl2 = false;
  });
}

/** Resolves once learnGraphics' answer is in, if one was asked for. */
export function graphicsKnown(): Promise<void> {
  return learned ?? Promise.resolve();
}

/** Asked once per page: a probe context, released at once, says who draws WebGL here. */
function hasGpuWebgl2(): boolean {
  if (gpuWebgl2 !== undefined) return gpuWebgl2;
  gpuWebgl2 = false;
  if (typeof WebGL2RenderingContext === 'undefined' || typeof document === 'undefined') return false;
  try {
    // A browser that knows it would rasterise in software refuses such a context outright.
    const gl = document.createElement('canvas').getContext('webgl2', { failIfMajorPerformanceCaveat: true });
    if (!gl) return false;
    const debug = gl.getExtension('WEBGL_debug_renderer_info');
    const renderer = String(gl.getParameter(debug ? debug.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    gpuWebgl2 = !isSoftwareGL(renderer);
  } catch {
    gpuWebgl2 = false;
  }
  return gpuWebgl2;
}

export const webglBudget = new WebglBudget();
