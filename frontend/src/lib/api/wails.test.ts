import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { WAILS_EVENT, WailsBackend, type WailsApp, type WailsRuntime } from './wails';

function fakeApp(over: Partial<WailsApp> = {}): WailsApp {
  const unused = () => Promise.reject('not used in this test');
  return {
    Version: unused,
    ListWorkspaces: unused,
    CreateWorkspace: unused,
    RenameWorkspace: unused,
    DeleteWorkspace: unused,
    ActivateWorkspace: unused,
    SetGrid: unused,
    SetWeights: unused,
    SwapPanes: unused,
    UpdatePane: unused,
    ExportWorkspace: unused,
    ImportWorkspace: unused,
    ListProviders: unused,
    SaveProvider: unused,
    DeleteProvider: unused,
    SetDefaultProviders: unused,
    TestProvider: unused,
    TestUnsavedProvider: unused,
    DiscoverProviders: unused,
    Prices: unused,
    SetPrices: unused,
    ...over,
  } as WailsApp;
}

describe('WailsBackend', () => {

  it('treats a cancelled save dialog as done, not as an error', async () => {
    const api = new WailsBackend(fakeApp({ ExportWorkspace: async () => '' }), undefined);
    await expect(api.exportWorkspace('w1')).resolves.toBeUndefined();
  });

  it('subscribes to the backend event and hands back the unsubscribe', () => {
    const off = vi.fn();
    let registered: ((...data: any[]) => void) | undefined;
    const runtime: WailsRuntime = {
      EventsOn: vi.fn((name: string, cb: (...data: any[]) => void) => {
        expect(name).toBe(WAILS_EVENT);
        registered = cb;
        return off;
      }),
    };
    const api = new WailsBackend(fakeApp(), runtime);
    const seen: unknown[] = [];
    const unsubscribe = api.subscribe((e) => seen.push(e));
    registered?.({ topic: 'workspaces', type: 'activated', data: { workspaces: [], activeId: '' } });
    expect(seen).toEqual([{ topic: 'workspaces', type: 'activated', data: { workspaces: [], activeId: '' } }]);
    unsubscribe();
    expect(off).toHaveBeenCalled();
  });
});

describe('WailsBackend terminals', () => {

  /** A promise the test settles by hand, to hold a bound call "in flight". */
  function deferred<T = void>() {
    let resolve!: (v: T) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  }

  it('decodes the base64 replay of an attach', async () => {
    const api = new WailsBackend(fakeApp({ TerminalAttach: async () => btoa('$ ls\r\n\x1b[0m') }), undefined);
    await expect(api.terminalAttach('p1', 'tab-1')).resolves.toEqual(new TextEncoder().encode('$ ls\r\n\x1b[0m'));
  });

  it("turns a failed attach's Go error into a BackendError", async () => {
    const api = new WailsBackend(fakeApp({ TerminalAttach: () => Promise.reject('pane "p1" has no tab "x": reopen the pane') }), undefined);
    const err = await api.terminalAttach('p1', 'x').catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toBe('pane "p1" has no tab "x": reopen the pane');
  });

  it('sends typing one call at a time, in order, joining keys typed while a call is in flight', async () => {
    const calls: string[] = [];
    const gates: Array<ReturnType<typeof deferred<void>>> = [];
    const api = new WailsBackend(
      fakeApp({
        TerminalInput: (_p: string, _t: string, data: string) => {
          calls.push(data);
          const g = deferred<void>();
          gates.push(g);
          return g.promise;
        },
      }),
      undefined,
    );
    api.terminalInput('p1', 'tab-1', 'l');
    await vi.waitFor(() => expect(calls).toEqual(['l']));
    api.terminalInput('p1', 'tab-1', 's');
    api.terminalInput('p1', 'tab-1', '\r');
    api.terminalInput('p2', 'tab-9', 'x'); // another tab is not held up
    await vi.waitFor(() => expect(calls).toEqual(['l', 'x']));
    gates[0].resolve();
    await vi.waitFor(() => expect(calls).toEqual(['l', 'x', 's\r']));
  });

  it('keeps typing after a failed call, and only warns', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const calls: string[] = [];
    const api = new WailsBackend(
      fakeApp({
        TerminalInput: async (_p: string, _t: string, data: string) => {
          calls.push(data);
          if (data === 'a') throw 'tab exited';
        },
      }),
      undefined,
    );
    api.terminalInput('p1', 'tab-1', 'a');
    await vi.waitFor(() => expect(warn).toHaveBeenCalled());
    api.terminalInput('p1', 'tab-1', 'b');
    await vi.waitFor(() => expect(calls).toEqual(['a', 'b']));
    warn.mockRestore();
  });

  it('orders attach after a detach of the same tab, and sends only the last of a burst of resizes', async () => {
    const order: string[] = [];
    const detachGate = deferred();
    const api = new WailsBackend(
      fakeApp({
        TerminalDetach: () => {
          order.push('detach');
          return detachGate.promise;
        },
        TerminalAttach: async () => {
          order.push('attach');
          return '';
        },
        TerminalResize: async (_p: string, _t: string, cols: number, rows: number) => {
          order.push(`resize ${cols}x${rows}`);
        },
      }),
      undefined,
    );
    void api.terminalDetach('p1', 'tab-1');
    const attached = api.terminalAttach('p1', 'tab-1');
    api.terminalResize('p1', 'tab-1', 100, 30);
    api.terminalResize('p1', 'tab-1', 110, 31);
    api.terminalResize('p1', 'tab-1', 120, 32);
    await Promise.resolve();
    expect(order).toEqual(['detach']);
    detachGate.resolve();
    await attached;
    await vi.waitFor(() => expect(order).toEqual(['detach', 'attach', 'resize 120x32']));
  });
});

describe('WailsBackend browser panes', () => {
  /** A runtime whose 'backend' event the test fires by hand. */
  function fakeRuntime() {
    let registered: ((...data: any[]) => void) | undefined;
    const runtime: WailsRuntime = {
      EventsOn: (_name: string, cb: (...data: any[]) => void) => {
        registered = cb;
        return () => (registered = undefined);
      },
    };
    return { runtime, fire: (e: unknown) => registered?.(e) };
  }

  it('delivers frames from the backend event, and a failed watch or input as a browser error event', async () => {
    const { runtime, fire } = fakeRuntime();
    const api = new WailsBackend(
      fakeApp({
        BrowserWatch: () => Promise.reject('no browser pane "p9": the browser panes are p1'),
        BrowserInput: () => Promise.reject('unknown key "Foo"'),
      }),
      runtime,
    );
    const seen: unknown[] = [];
    const unsubscribe = api.subscribe((e) => seen.push(e));
    const frame = { topic: 'browser', type: 'frame', data: { paneId: 'p1', data: '/9j/', width: 1, height: 1 } };
    fire(frame);
    api.browserWatch('p9');
    api.browserInput('p1', { type: 'keydown', key: 'Foo' });
    await vi.waitFor(() => expect(seen).toHaveLength(3));
    expect(seen[0]).toEqual(frame);
    // Watch and input go in separate lanes: their failures may come in either order.
    expect(seen).toContainEqual({ topic: 'browser', type: 'error', data: { paneId: 'p9', error: 'no browser pane "p9": the browser panes are p1' } });
    expect(seen).toContainEqual({ topic: 'browser', type: 'error', data: { paneId: 'p1', error: 'unknown key "Foo"' } });
    unsubscribe();
    api.browserInput('p1', { type: 'keydown', key: 'Foo' });
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toHaveLength(3);
  });

  it('sends input one call at a time in order, keeping only the newest of waiting mouse moves', async () => {
    const sent: string[] = [];
    const gates: Array<() => void> = [];
    const api = new WailsBackend(
      fakeApp({
        BrowserInput: (_p: string, ev: { type: string; x?: number }) => {
          sent.push(ev.type === 'mousemove' ? `move ${ev.x}` : ev.type);
          return new Promise<void>((resolve) => gates.push(resolve));
        },
      }),
      undefined,
    );
    api.browserInput('p1', { type: 'mousemove', x: 1, y: 1 });
    await vi.waitFor(() => expect(sent).toEqual(['move 1']));
    api.browserInput('p1', { type: 'mousemove', x: 2, y: 1 });
    api.browserInput('p1', { type: 'mousemove', x: 3, y: 1 });
    api.browserInput('p1', { type: 'mousedown', x: 3, y: 1 });
    api.browserInput('p1', { type: 'mouseup', x: 3, y: 1 });
    api.browserInput('p1', { type: 'mousemove', x: 4, y: 1 });
    for (let i = 0; i < 4; i++) {
      gates[i]();
      await vi.waitFor(() => expect(sent).toHaveLength(i + 2));
    }
    expect(sent).toEqual(['move 1', 'move 3', 'mousedown', 'mouseup', 'move 4']);
  });

  it('orders watch and unwatch of a pane', async () => {
    const order: string[] = [];
    let releaseWatch: () => void = () => {};
    const api = new WailsBackend(
      fakeApp({
        BrowserWatch: () => {
          order.push('watch');
          return new Promise<void>((resolve) => (releaseWatch = resolve));
        },
        BrowserUnwatch: async () => {
          order.push('unwatch');
        },
      }),
      undefined,
    );
    api.browserWatch('p1');
    api.browserUnwatch('p1');
    await Promise.resolve();
    expect(order).toEqual(['watch']);
    releaseWatch();
    await vi.waitFor(() => expect(order).toEqual(['watch', 'unwatch']));
  });
});

