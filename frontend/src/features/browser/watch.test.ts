import { describe, expect, it } from 'vitest';
import { WatchGate } from './watch';

function gate() {
  const calls: string[] = [];
  const g = new WatchGate(
    () => calls.push('watch'),
    () => calls.push('unwatch'),
  );
  return { g, calls };
}

describe('WatchGate', () => {
  it('watches only while the pane has a tab, is in view and the page is visible', () => {
    const { g, calls } = gate();
    g.set({ inView: true });
    expect(calls).toEqual([]); // no tab yet
    g.set({ ready: true });
    expect(calls).toEqual(['watch']);
    g.set({ inView: true, ready: true }); // nothing changed
    expect(calls).toEqual(['watch']);
    g.set({ inView: false });
    expect(calls).toEqual(['watch', 'unwatch']);
    g.set({ inView: true });
    g.set({ pageVisible: false });
    g.set({ pageVisible: true });
    expect(calls).toEqual(['watch', 'unwatch', 'watch', 'unwatch', 'watch']);
    expect(g.watching).toBe(true);
  });

  it('stops when the last tab closes and starts again when one opens', () => {
    const { g, calls } = gate();
    g.set({ inView: true, ready: true });
    g.set({ ready: false });
    g.set({ ready: true });
    expect(calls).toEqual(['watch', 'unwatch', 'watch']);
  });

  it('unwatches on dispose, once, and ignores changes after it', () => {
    const { g, calls } = gate();
    g.set({ inView: true, ready: true });
    g.dispose();
    g.dispose();
    g.set({ inView: false });
    g.set({ inView: true });
    expect(calls).toEqual(['watch', 'unwatch']);

    const idle = gate();
    idle.g.dispose(); // never watched: nothing to undo
    expect(idle.calls).toEqual([]);
  });
});
