// When a browser pane's view receives frames: only while it can be seen. Chromium draws a
// screencast only for watched tabs, so a pane scrolled away, behind another browser tab of the
// OS, or on a hidden workspace costs nothing.

export interface WatchConditions {
  /** Some of the canvas is on screen (IntersectionObserver). */
  inView: boolean;
  /** The page itself is visible (document.visibilityState). */
  pageVisible: boolean;
  /** The pane has a tab to show: watching a pane the backend does not know fails. */
  ready: boolean;
}

/**
 * Calls `start` when all conditions hold and `stop` when one stops holding, once per change.
 * The pure part of the view's watching, so it can be tested without a DOM.
 */
export class WatchGate {
  private state: WatchConditions = { inView: false, pageVisible: true, ready: false };
  private on = false;
  private disposed = false;

  constructor(
    private readonly start: () => void,
    private readonly stop: () => void,
  ) {}

  get watching(): boolean {
    return this.on;
  }

  set(change: Partial<WatchConditions>): void {
    if (this.disposed) return;
    this.state = { ...this.state, ...change };
    const want = this.state.inView && this.state.pageVisible && this.state.ready;
    if (want === this.on) return;
    this.on = want;
    if (want) this.start();
    else this.stop();
  }

  /** Stops for good (the view unmounts). */
  dispose(): void {
    if (this.disposed) return;
    if (this.on) this.stop();
    this.on = false;
    this.disposed = true;
  }
}
