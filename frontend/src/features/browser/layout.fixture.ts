import { vi } from 'vitest';

/** An observer that never reports. */
export class NoopObserver {
  observe() {}
  disconnect() {}
}

/**
 * jsdom has no layout, observers or canvas, and a browser pane needs them to mount: stubs them
 * (for a beforeEach; vi.unstubAllGlobals and vi.restoreAllMocks undo it). A test that drives
 * visibility passes its own IntersectionObserver.
 */
export function stubBrowserLayout(intersectionObserver: new (cb: IntersectionObserverCallback) => object = NoopObserver) {
  vi.stubGlobal('IntersectionObserver', intersectionObserver);
  vi.stubGlobal('ResizeObserver', NoopObserver);
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue(null);
}
