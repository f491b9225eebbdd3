// Divider math: weights are CSS `fr` values, so only their ratios matter. Dragging divider i
// moves weight between track i and track i+1 and leaves every other track alone.

/** No track may shrink below this share of the total, so a pane never vanishes under a divider. */
export const MIN_TRACK_SHARE = 0.1;

/**
 * Weights after dragging divider `index` (between tracks index and index+1) by `deltaPx`.
 * `trackPx` is the pixel size the tracks share (the container minus the dividers). The pair's sum,
 * and so the total, is preserved; both tracks stay at or above MIN_TRACK_SHARE of the total.
 * Always computes from the weights at drag start, so rounding never accumulates.
 */
export function dragDivider(
  weights: readonly number[],
  index: number,
  deltaPx: number,
  trackPx: number,
  minShare = MIN_TRACK_SHARE,
): number[] {
  const out = weights.slice();
  if (index < 0 || index + 1 >= weights.length || trackPx <= 0 || !Number.isFinite(deltaPx)) {
    return out;
  }
  const total = sum(weights);
  const min = total * minShare;
  const a = weights[index];
  const b = weights[index + 1];
  const pair = a + b;
  if (pair < 2 * min) return out; // already below the floor on both sides: nothing can move
  const wanted = a + (deltaPx / trackPx) * total;
  const nextA = Math.min(Math.max(wanted, min), pair - min);
  out[index] = nextA;
  out[index + 1] = pair - nextA;
  return out;
}

/** Equal weights, for resetting a grid with a double-click on a divider. */
export function equalWeights(count: number): number[] {
  return Array.from({ length: count }, () => 1);
}

/** The CSS track list: each weight as `fr`, with a fixed-size divider track between tracks. */
export function gridTemplate(weights: readonly number[], dividerPx: number): string {
  return weights.map((w) => `${round(w)}fr`).join(` ${dividerPx}px `);
}

export function sum(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0);
}

/** Weights travel as JSON and show in CSS; six significant digits is plenty for pixels. */
export function round(x: number): number {
  return Number(x.toPrecision(6));
}
