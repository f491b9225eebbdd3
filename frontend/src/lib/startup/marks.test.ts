import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterFirstPaint, afterNextPaint, firstPaintDone, holdUntilFirstPaint } from './marks';

describe('first paint hold', () => {
  afterEach(() => vi.useRealTimers());

  it('runs deferred work only after the first paint, one piece per task, in order', async () => {
    vi.useFakeTimers();
    holdUntilFirstPaint();
    const ran: string[] = [];
    afterFirstPaint(() => ran.push('a'));
    const cancel = afterFirstPaint(() => ran.push('cancelled'));
    afterFirstPaint(() => ran.push('b'));
    cancel();
    await vi.advanceTimersByTimeAsync(5000);
    expect(ran).toEqual([]);
    firstPaintDone();
    await vi.advanceTimersToNextTimerAsync();
    expect(ran).toEqual(['a']);
    await vi.advanceTimersToNextTimerAsync();
    expect(ran).toEqual(['a', 'b']);
    // Nothing holds now: new work runs at once.
    afterFirstPaint(() => ran.push('c'));
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('goes ahead without a frame when the page is hidden', async () => {
    vi.useFakeTimers();
    vi.stubGlobal('requestAnimationFrame', () => 0); // frames never come
    const done = vi.fn();
    afterNextPaint(done);
    await vi.advanceTimersByTimeAsync(999);
    expect(done).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toHaveBeenCalledTimes(1);
    vi.unstubAllGlobals();
  });
});
