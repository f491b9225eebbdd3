// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IDLE_REPORT_MS, startEchoProbe } from './echoprobe';
import { registerTerminal } from './registry';

describe('startEchoProbe', () => {
  let cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanup) c();
    cleanup = [];
    document.body.innerHTML = '';
  });

  /** A terminal pane holding the keyboard, whose cursor and parsed-output callbacks the test drives. */
  function focusedTerminal(paneId: string, cursor: number) {
    document.body.innerHTML = `<div data-testid="pane" data-kind="terminal" data-pane-id="${paneId}"><textarea></textarea></div>`;
    document.querySelector('textarea')!.focus();
    const term = { cursor, parsed: new Set<() => void>() };
    cleanup.push(
      registerTerminal(paneId, {
        text: () => '',
        size: () => null,
        focus: () => {},
        cursorOffset: () => term.cursor,
        onWriteParsed: (cb) => {
          term.parsed.add(cb);
          return () => term.parsed.delete(cb);
        },
      }),
    );
    return term;
  }

  it('times each key from going down to its echo in the focused terminal, and reports after N', () => {
    const term = focusedTerminal('p1', 10);
    let clock = 0;
    const reports: number[][] = [];
    cleanup.push(startEchoProbe(document, 2, (s) => reports.push(s), () => clock));
    const type = (key: string, at: number) => {
      const ev = new KeyboardEvent('keydown', { key });
      Object.defineProperty(ev, 'timeStamp', { value: at });
      document.dispatchEvent(ev);
    };
    const echo = (to: number, at: number) => {
      term.cursor = to;
      clock = at;
      for (const cb of [...term.parsed]) cb();
    };

    clock = 100;
    type('Shift', 100); // not printable: no sample
    clock = 101;
    type('a', 100);
    echo(10, 102); // output that does not move the cursor past the key is not its echo
    echo(11, 104);
    clock = 200;
    type('b', 5000); // a stamp on another clock: the handler's time is used
    echo(12, 203);
    expect(reports).toEqual([[4, 3]]);
    expect(term.parsed.size).toBe(0);
    type('c', 300); // after the report: not timed
    expect(term.parsed.size).toBe(0);
  });

  it('reports what it has once typing stops short of N', () => {
    vi.useFakeTimers();
    cleanup.push(() => vi.useRealTimers());
    const term = focusedTerminal('p2', 0);
    let clock = 10;
    const reports: number[][] = [];
    cleanup.push(startEchoProbe(document, 200, (s) => reports.push(s), () => clock));
    const ev = new KeyboardEvent('keydown', { key: 'x' });
    Object.defineProperty(ev, 'timeStamp', { value: 10 });
    document.dispatchEvent(ev);
    term.cursor = 1;
    clock = 12;
    for (const cb of [...term.parsed]) cb();
    expect(reports).toEqual([]);
    vi.advanceTimersByTime(IDLE_REPORT_MS);
    expect(reports).toEqual([[2]]);
  });
});
