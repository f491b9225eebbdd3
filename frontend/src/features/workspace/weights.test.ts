import { describe, expect, it } from 'vitest';
import { dragDivider, gridTemplate, MIN_TRACK_SHARE, sum } from './weights';

describe('dragDivider', () => {
  it('moves weight from one neighbour to the other in proportion to the pixels dragged', () => {
    // Two equal tracks sharing 400px: dragging 100px right moves a quarter of the total.
    const w = dragDivider([1, 1], 0, 100, 400);
    expect(w[0]).toBeCloseTo(1.5);
    expect(w[1]).toBeCloseTo(0.5);
  });

  it('preserves the total and leaves other tracks alone', () => {
    const start = [1, 2, 3, 0.5];
    const w = dragDivider(start, 1, -37, 513);
    expect(sum(w)).toBeCloseTo(sum(start), 10);
    expect(w[0]).toBe(1);
    expect(w[3]).toBe(0.5);
    expect(w[1] + w[2]).toBeCloseTo(5, 10);
    expect(w[1]).toBeLessThan(2);
  });

  it('clamps so no track falls below the minimum share of the total', () => {
    const start = [1, 1, 1];
    const min = sum(start) * MIN_TRACK_SHARE;
    const right = dragDivider(start, 0, 10_000, 300);
    expect(right[1]).toBeCloseTo(min);
    expect(right[0]).toBeCloseTo(2 - min);
    const left = dragDivider(start, 0, -10_000, 300);
    expect(left[0]).toBeCloseTo(min);
    expect(sum(left)).toBeCloseTo(3, 10);
  });

  it('does nothing for a divider that does not exist or a zero-size container', () => {
    expect(dragDivider([1, 1], 1, 50, 100)).toEqual([1, 1]);
    expect(dragDivider([1, 1], -1, 50, 100)).toEqual([1, 1]);
    expect(dragDivider([1, 1], 0, 50, 0)).toEqual([1, 1]);
  });

  it('leaves a pair alone when both are already under the floor', () => {
    expect(dragDivider([0.01, 0.01, 10], 0, 20, 100)).toEqual([0.01, 0.01, 10]);
  });

  it('does not mutate its input', () => {
    const start = [1, 1];
    dragDivider(start, 0, 30, 100);
    expect(start).toEqual([1, 1]);
  });
});

describe('gridTemplate', () => {
  it('interleaves fr tracks with fixed divider tracks', () => {
    expect(gridTemplate([1, 2.5, 1], 5)).toBe('1fr 5px 2.5fr 5px 1fr');
    expect(gridTemplate([1], 5)).toBe('1fr');
  });
});
