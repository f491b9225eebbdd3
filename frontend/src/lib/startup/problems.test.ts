import { describe, expect, it } from 'vitest';
import { reportUncaughtErrors } from './problems';

describe('reportUncaughtErrors', () => {
  it('hands uncaught errors and unhandled rejections to the backend, and stops when told', () => {
    const target = new EventTarget() as unknown as Window;
    const got: string[] = [];
    const stop = reportUncaughtErrors(target, { reportProblem: (m) => got.push(m) });

    target.dispatchEvent(Object.assign(new Event('error'), { error: new TypeError('xterm chunk failed') }));
    target.dispatchEvent(Object.assign(new Event('unhandledrejection'), { reason: 'no pane p1' }));
    expect(got).toHaveLength(2);
    expect(got[0]).toMatch(/^uncaught error: TypeError: xterm chunk failed/);
    expect(got[1]).toBe('unhandled rejection: no pane p1');

    stop();
    target.dispatchEvent(Object.assign(new Event('unhandledrejection'), { reason: 'later' }));
    expect(got).toHaveLength(2);
  });

  it('stops reporting after a flood, and cuts long reports', () => {
    const target = new EventTarget() as unknown as Window;
    const got: string[] = [];
    reportUncaughtErrors(target, { reportProblem: (m) => got.push(m) });
    for (let i = 0; i < 500; i++) target.dispatchEvent(Object.assign(new Event('unhandledrejection'), { reason: 'x'.repeat(10_000) }));
    expect(got.length).toBe(50);
    expect(got[0].length).toBe(2000);
  });
});
