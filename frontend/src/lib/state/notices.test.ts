import { afterEach, describe, expect, it, vi } from 'vitest';
import { Notices, NOTICE_TTL_MS } from './notices.svelte';

describe('Notices', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('takes each error down after a while, newest last', () => {
    vi.useFakeTimers();
    const n = new Notices();
    n.report(new Error('first'));
    vi.advanceTimersByTime(NOTICE_TTL_MS / 2);
    n.report(new Error('second'));
    expect(n.items.map((i) => i.message)).toEqual(['first', 'second']);
    vi.advanceTimersByTime(NOTICE_TTL_MS / 2);
    expect(n.items.map((i) => i.message)).toEqual(['second']);
    vi.advanceTimersByTime(NOTICE_TTL_MS / 2);
    expect(n.items).toEqual([]);
  });
});
