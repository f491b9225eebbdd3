// Where a screencast frame is drawn on the pane's canvas, and the way back: from a point on the
// canvas to the page's own CSS pixels, which is what the backend's input events take.

export interface Size {
  width: number;
  height: number;
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

/** The backend refuses viewports larger than this on either side (backend/browser maxDimension). */
export const MAX_VIEWPORT = 8192;

/**
 * Where a frame goes in a box: as large as fits with its aspect kept, centred (letterboxed on
 * the other axis). Both sizes in the same unit; an empty box or frame gives an empty rect.
 */
export function fitRect(box: Size, frame: Size): Rect {
  if (!(box.width > 0 && box.height > 0 && frame.width > 0 && frame.height > 0)) {
    return { x: 0, y: 0, width: 0, height: 0 };
  }
  const scale = Math.min(box.width / frame.width, box.height / frame.height);
  const width = frame.width * scale;
  const height = frame.height * scale;
  return { x: (box.width - width) / 2, y: (box.height - height) / 2, width, height };
}

/**
 * The page point (CSS pixels of its viewport, `frame`) under `p`, a point in CSS pixels from the
 * top-left of the canvas whose displayed size is `box`. Null when `p` is outside the drawn frame
 * (the letterbox bars), unless `clamp`, which pins it to the frame's edge instead (a drag that
 * leaves the picture keeps dragging along its edge).
 */
export function toPagePoint(p: Point, box: Size, frame: Size, clamp = false): Point | null {
  const r = fitRect(box, frame);
  if (r.width === 0) return null;
  let x = ((p.x - r.x) / r.width) * frame.width;
  let y = ((p.y - r.y) / r.height) * frame.height;
  const inside = x >= 0 && y >= 0 && x < frame.width && y < frame.height;
  if (!inside && !clamp) return null;
  x = Math.min(Math.max(x, 0), frame.width - 1);
  y = Math.min(Math.max(y, 0), frame.height - 1);
  return { x: round2(x), y: round2(y) };
}

/** The viewport to ask for so frames fill a box of this size: whole pixels within range. */
export function viewportFor(box: Size): Size | null {
  const width = Math.min(Math.floor(box.width), MAX_VIEWPORT);
  const height = Math.min(Math.floor(box.height), MAX_VIEWPORT);
  return width >= 1 && height >= 1 ? { width, height } : null;
}

/** Two decimals are plenty for CSS pixels and keep the wire short. */
function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
