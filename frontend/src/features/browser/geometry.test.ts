import { describe, expect, it } from 'vitest';
import { fitRect, MAX_VIEWPORT, toPagePoint, viewportFor } from './geometry';

describe('fitRect', () => {
  it('fills a box of the same aspect exactly', () => {
    expect(fitRect({ width: 800, height: 600 }, { width: 400, height: 300 })).toEqual({ x: 0, y: 0, width: 800, height: 600 });
  });

  it('letterboxes a wide frame top and bottom, and a tall one left and right, centred', () => {
    expect(fitRect({ width: 800, height: 600 }, { width: 1600, height: 800 })).toEqual({ x: 0, y: 100, width: 800, height: 400 });
    expect(fitRect({ width: 800, height: 600 }, { width: 300, height: 600 })).toEqual({ x: 250, y: 0, width: 300, height: 600 });
  });

  it('is empty for an empty box or frame', () => {
    expect(fitRect({ width: 0, height: 600 }, { width: 10, height: 10 }).width).toBe(0);
    expect(fitRect({ width: 10, height: 10 }, { width: 0, height: 0 }).width).toBe(0);
  });
});

describe('toPagePoint', () => {
  it('is the identity when the canvas shows the page at its own size', () => {
    expect(toPagePoint({ x: 120, y: 45.5 }, { width: 800, height: 600 }, { width: 800, height: 600 })).toEqual({ x: 120, y: 45.5 });
  });

  it('scales a point on a canvas smaller or larger than the page', () => {
    // The page is 1280×720, shown at half size.
    expect(toPagePoint({ x: 100, y: 50 }, { width: 640, height: 360 }, { width: 1280, height: 720 })).toEqual({ x: 200, y: 100 });
    // The page is 400×300, shown at double size.
    expect(toPagePoint({ x: 100, y: 50 }, { width: 800, height: 600 }, { width: 400, height: 300 })).toEqual({ x: 50, y: 25 });
  });

  it('takes the letterbox bars off before scaling', () => {
    // 1600×800 in 800×600: drawn at 0,100 800×400, scale 0.5.
    expect(toPagePoint({ x: 400, y: 300 }, { width: 800, height: 600 }, { width: 1600, height: 800 })).toEqual({ x: 800, y: 400 });
    expect(toPagePoint({ x: 0, y: 100 }, { width: 800, height: 600 }, { width: 1600, height: 800 })).toEqual({ x: 0, y: 0 });
    // 300×600 in 800×600: drawn at 250,0.
    expect(toPagePoint({ x: 260, y: 10 }, { width: 800, height: 600 }, { width: 300, height: 600 })).toEqual({ x: 10, y: 10 });
  });

  it('is null on the bars, unless clamped to the edge (a drag that leaves the picture)', () => {
    const box = { width: 800, height: 600 };
    const frame = { width: 1600, height: 800 };
    expect(toPagePoint({ x: 400, y: 50 }, box, frame)).toBeNull();
    expect(toPagePoint({ x: 400, y: 590 }, box, frame)).toBeNull();
    expect(toPagePoint({ x: 400, y: 50 }, box, frame, true)).toEqual({ x: 800, y: 0 });
    expect(toPagePoint({ x: 900, y: 590 }, box, frame, true)).toEqual({ x: 1599, y: 799 });
    expect(toPagePoint({ x: 1, y: 1 }, { width: 0, height: 0 }, frame)).toBeNull();
  });

  it('rounds to two decimals', () => {
    expect(toPagePoint({ x: 1, y: 1 }, { width: 300, height: 300 }, { width: 100, height: 100 })).toEqual({ x: 0.33, y: 0.33 });
  });
});

describe('viewportFor', () => {
  it('asks for whole CSS pixels within the backend range', () => {
    expect(viewportFor({ width: 691.5, height: 358.5 })).toEqual({ width: 691, height: 358 });
    expect(viewportFor({ width: 20000, height: 10 })).toEqual({ width: MAX_VIEWPORT, height: 10 });
    expect(viewportFor({ width: 0.5, height: 300 })).toBeNull();
  });
});
