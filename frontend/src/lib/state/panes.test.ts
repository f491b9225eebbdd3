import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BackendError, type Backend, type BackendEvent, type Pane, type Workspace } from '../api';
import { createAppContext } from './context';
import { convertQuestion, neighbourPane, splitCommandLine } from './paneNav';
import { FOCUS_DEBOUNCE_MS } from './panes.svelte';

const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}Z`;

/** A 2×2 grid: a b / c d, all terminals unless `over` says otherwise. */
function ws(over: Partial<Workspace> = {}): Workspace {
  const pane = (id: string, row: number, col: number): Pane => ({ id, kind: 'terminal', label: id, row, col });
  return {
    id: 'w1',
    name: 'W',
    position: 0,
    rows: 2,
    cols: 2,
    rowWeights: [1, 1],
    colWeights: [1, 1],
    panes: [pane('a', 0, 0), pane('b', 0, 1), pane('c', 1, 0), pane('d', 1, 1)],
    focusedPaneId: '',
    maximizedPaneId: '',
    createdAt: at(0),
    updatedAt: at(1),
    ...over,
  };
}

const snapshot = (w: Workspace[], activeId = 'w1'): BackendEvent => ({
  topic: 'workspaces',
  type: 'updated',
  data: { workspaces: w, activeId },
});

function setup(over: Record<string, unknown> = {}) {
  let clock = 10;
  const backend = {
    kind: 'web',
    focusPane: vi.fn(async (_id: string, paneId: string) => ws({ focusedPaneId: paneId, updatedAt: at(clock++) })),
    toggleMaximizePane: vi.fn(async (_id: string, paneId: string) => ws({ maximizedPaneId: paneId, focusedPaneId: paneId, updatedAt: at(clock++) })),
    setPaneLaunch: vi.fn(async () => ws({ updatedAt: at(clock++) })),
    convertPane: vi.fn(async () => ws({ updatedAt: at(clock++) })),
    launchTemplates: vi.fn(async () => []),
    ...over,
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.workspaces.applySnapshot({ workspaces: [ws()], activeId: 'w1' });
  const current = () => ctx.workspaces.byId('w1')!;
  return { ctx, backend, current };
}

describe('PaneStore focus', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sends only where focus came to rest, and shows it at once', async () => {
    const { ctx, backend, current } = setup();
    ctx.panes.focus('w1', 'b');
    ctx.panes.focus('w1', 'c');
    ctx.panes.focus('w1', 'd');
    expect(ctx.panes.focusedPaneId(current())).toBe('d');
    expect(backend.focusPane).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(FOCUS_DEBOUNCE_MS);
    expect(backend.focusPane).toHaveBeenCalledTimes(1);
    expect(backend.focusPane).toHaveBeenCalledWith('w1', 'd');
    expect(current().focusedPaneId).toBe('d');
    expect(ctx.panes.focusPending('w1')).toBe(false);
  });

  it('does not echo a focus the backend announced back to it', async () => {
    const { ctx, backend, current } = setup();
    ctx.workspaces.handleEvent(snapshot([ws({ focusedPaneId: 'c', updatedAt: at(5) })]));
    expect(ctx.panes.focusedPaneId(current())).toBe('c');
    // The keyboard follows into pane c, whose focusin reports it: nothing is sent.
    ctx.panes.focus('w1', 'c');
    await vi.advanceTimersByTimeAsync(FOCUS_DEBOUNCE_MS * 2);
    expect(backend.focusPane).not.toHaveBeenCalled();
  });

  it("keeps the person's pending focus over an older announcement, then follows the backend again", async () => {
    let answer!: (w: Workspace) => void;
    const { ctx, current } = setup({ focusPane: vi.fn(() => new Promise<Workspace>((r) => (answer = r))) });
    ctx.panes.focus('w1', 'b');
    await vi.advanceTimersByTimeAsync(FOCUS_DEBOUNCE_MS);
    // An event from before our call lands while it is in flight.
    ctx.workspaces.handleEvent(snapshot([ws({ focusedPaneId: 'a', updatedAt: at(3) })]));
    expect(ctx.panes.focusedPaneId(current())).toBe('b');
    answer(ws({ focusedPaneId: 'b', updatedAt: at(4) }));
    await vi.advanceTimersByTimeAsync(0);
    expect(ctx.panes.focusPending('w1')).toBe(false);
    expect(ctx.panes.focusedPaneId(current())).toBe('b');
    // The agent's focus_pane later: the UI shows it.
    ctx.workspaces.handleEvent(snapshot([ws({ focusedPaneId: 'd', updatedAt: at(6) })]));
    expect(ctx.panes.focusedPaneId(current())).toBe('d');
  });

  it('ignores panes the workspace does not hold, and a focus or maximize naming a gone pane', () => {
    const { ctx, backend, current } = setup();
    ctx.panes.focus('w1', 'zz');
    ctx.panes.focus('nope', 'a');
    expect(ctx.panes.focusPending('w1')).toBe(false);
    expect(backend.focusPane).not.toHaveBeenCalled();
    ctx.workspaces.handleEvent(snapshot([ws({ focusedPaneId: 'gone', maximizedPaneId: 'gone', updatedAt: at(5) })]));
    expect(ctx.panes.focusedPaneId(current())).toBe('');
    expect(ctx.panes.maximizedPaneId(current())).toBe('');
  });

  it('reports a failed focus and falls back to what the backend holds', async () => {
    const { ctx, current } = setup({
      focusPane: vi.fn(async () => {
        throw new BackendError('pane b not found in workspace "W" — call list_panes for the current ids');
      }),
    });
    ctx.panes.focus('w1', 'b');
    await vi.advanceTimersByTimeAsync(FOCUS_DEBOUNCE_MS);
    expect(ctx.notices.items.map((n) => n.message)).toEqual(['pane b not found in workspace "W" — call list_panes for the current ids']);
    expect(ctx.panes.focusedPaneId(current())).toBe('');
  });

  it('Alt+Arrow moves to the neighbour and stops at the edge', async () => {
    const { ctx, backend } = setup();
    ctx.workspaces.handleEvent(snapshot([ws({ focusedPaneId: 'a', updatedAt: at(5) })]));
    expect(ctx.panes.move('w1', 'left')).toBeUndefined();
    expect(ctx.panes.move('w1', 'right')?.id).toBe('b');
    expect(ctx.panes.move('w1', 'down')?.id).toBe('d');
    await vi.advanceTimersByTimeAsync(FOCUS_DEBOUNCE_MS);
    expect(backend.focusPane).toHaveBeenCalledTimes(1);
    expect(backend.focusPane).toHaveBeenCalledWith('w1', 'd');
  });

  it('while a pane is maximized, Alt+Arrow maximizes the neighbour instead', async () => {
    const { ctx, backend, current } = setup();
    ctx.workspaces.handleEvent(snapshot([ws({ focusedPaneId: 'a', maximizedPaneId: 'a', updatedAt: at(5) })]));
    ctx.panes.move('w1', 'down');
    await vi.advanceTimersByTimeAsync(0);
    expect(backend.toggleMaximizePane).toHaveBeenCalledWith('w1', 'c');
    expect(backend.focusPane).not.toHaveBeenCalled();
    expect(ctx.panes.maximizedPaneId(current())).toBe('c');
  });

  it('Ctrl+Enter maximizes the focused pane', async () => {
    const { ctx, backend, current } = setup();
    ctx.panes.focus('w1', 'd');
    await ctx.panes.toggleMaximizeFocused('w1');
    expect(backend.toggleMaximizePane).toHaveBeenCalledWith('w1', 'd');
    expect(ctx.panes.maximizedPaneId(current())).toBe('d');
  });
});

describe('PaneStore convert', () => {
  const busy = () =>
    new BackendError('vim is running in pane a', { status: 409, field: 'force', busy: [{ paneId: 'a', label: 'a', busy: ['vim', 'make test'] }] });

  it('asks first when something runs in the pane, and converts only after a yes, with force', async () => {
    const convertPane = vi.fn(async (_w: string, _p: string, req: { force?: boolean }) => {
      if (!req.force) throw busy();
      return ws({ updatedAt: at(20) });
    });
    const { ctx } = setup({ convertPane });

    const declined = ctx.panes.convert('w1', 'a', { kind: 'browser' });
    await vi.waitFor(() => expect(ctx.dialogs.current).not.toBeNull());
    expect(ctx.dialogs.current!.message).toBe(
      '"vim" and "make test" are running in this pane. Converting it to a browser pane ends them. Convert anyway?',
    );
    ctx.dialogs.current!.answer(false);
    expect(await declined).toBeUndefined();
    expect(convertPane).toHaveBeenCalledTimes(1);

    const accepted = ctx.panes.convert('w1', 'a', { kind: 'browser', url: 'http://localhost:5173' });
    await vi.waitFor(() => expect(ctx.dialogs.current).not.toBeNull());
    ctx.dialogs.current!.answer(true);
    expect(await accepted).toBeDefined();
    expect(convertPane.mock.calls.at(-1)).toEqual(['w1', 'a', { kind: 'browser', url: 'http://localhost:5173', force: true }]);
    expect(ctx.notices.items).toEqual([]);
  });

  it('shows any other refusal as the backend worded it, without asking', async () => {
    const { ctx } = setup({
      convertPane: vi.fn(async () => {
        throw new BackendError('a goal works in pane a: stop or finish it first', { status: 409, field: 'paneId' });
      }),
    });
    expect(await ctx.panes.convert('w1', 'a', { kind: 'browser' })).toBeUndefined();
    expect(ctx.dialogs.current).toBeNull();
    expect(ctx.notices.items.map((n) => n.message)).toEqual(['a goal works in pane a: stop or finish it first']);
  });

  it('does not ask twice when the forced call is refused too', async () => {
    const { ctx } = setup({ convertPane: vi.fn(async () => Promise.reject(busy())) });
    const p = ctx.panes.convert('w1', 'a', { kind: 'browser' });
    await vi.waitFor(() => expect(ctx.dialogs.current).not.toBeNull());
    ctx.dialogs.current!.answer(true);
    expect(await p).toBeUndefined();
    expect(ctx.dialogs.current).toBeNull();
    expect(ctx.notices.items.map((n) => n.message)).toEqual(['vim is running in pane a']);
  });
});

describe('PaneStore start as', () => {
  it('gives a terminal pane the template, keeping its directory and environment', async () => {
    const { ctx, backend } = setup();
    const pane: Pane = { id: 'a', kind: 'terminal', label: 'a', row: 0, col: 0, launch: { template: 'shell', dir: '/srv/app', env: ['A=1'] } };
    await ctx.panes.startAs('w1', pane, 'claude');
    expect(backend.setPaneLaunch).toHaveBeenCalledWith('w1', 'a', { template: 'claude', dir: '/srv/app', env: ['A=1'] }, false);
    await ctx.panes.startAs('w1', pane, 'custom', ['npm', 'run', 'dev']);
    expect(backend.setPaneLaunch).toHaveBeenLastCalledWith('w1', 'a', {
      template: 'custom',
      command: 'npm',
      args: ['run', 'dev'],
      dir: '/srv/app',
      env: ['A=1'],
    }, false);
  });

  it('asks before restarting a pane whose terminal runs a command, then restarts with force', async () => {
    const setPaneLaunch = vi.fn(async (_w: string, _p: string, _l: unknown, force?: boolean) => {
      if (!force) throw new BackendError('pane a is running vim', { status: 409, field: 'force', busy: [{ paneId: 'a', label: 'a', busy: ['vim'] }] });
      return ws({ updatedAt: at(30) });
    });
    const { ctx } = setup({ setPaneLaunch });
    const pane: Pane = { id: 'a', kind: 'terminal', label: 'a', row: 0, col: 0 };
    const started = ctx.panes.startAs('w1', pane, 'python');
    await vi.waitFor(() => expect(ctx.dialogs.current).not.toBeNull());
    expect(ctx.dialogs.current!.message).toContain('"vim"');
    ctx.dialogs.current!.answer(true);
    expect(await started).toBeDefined();
    expect(setPaneLaunch.mock.calls.map((c) => c[3])).toEqual([false, true]);
  });

  it('turns a browser pane into a terminal started from the template', async () => {
    const { ctx, backend } = setup();
    const pane: Pane = { id: 'b', kind: 'browser', label: 'b', row: 0, col: 1 };
    await ctx.panes.startAs('w1', pane, 'aider');
    expect(backend.convertPane).toHaveBeenCalledWith('w1', 'b', { kind: 'terminal', template: 'aider' });
    expect(backend.setPaneLaunch).not.toHaveBeenCalled();
    await ctx.panes.startAs('w1', pane, 'custom', ['htop']);
    expect(backend.convertPane).toHaveBeenLastCalledWith('w1', 'b', { kind: 'terminal' });
    expect(backend.setPaneLaunch).toHaveBeenCalledWith('w1', 'b', { template: 'custom', command: 'htop' }, false);
  });
});

describe('agent-made workspaces', () => {
  it('a workspace the agent created arrives by event and is listed (and shown, when the backend made it active)', () => {
    const { ctx } = setup();
    const made = ws({ id: 'w2', name: 'Agents', position: 1, rows: 1, cols: 3, updatedAt: at(9) });
    ctx.workspaces.handleEvent({ topic: 'workspaces', type: 'created', data: { workspaces: [ws(), made], activeId: 'w2' } });
    expect(ctx.workspaces.workspaces.map((w) => w.name)).toEqual(['W', 'Agents']);
    expect(ctx.workspaces.active?.id).toBe('w2');
  });
});

describe('pane navigation helpers', () => {
  it('finds the neighbour in each direction, none past the edge, the first pane from nowhere', () => {
    const w = ws();
    expect(neighbourPane(w, 'a', 'right')?.id).toBe('b');
    expect(neighbourPane(w, 'a', 'down')?.id).toBe('c');
    expect(neighbourPane(w, 'd', 'up')?.id).toBe('b');
    expect(neighbourPane(w, 'd', 'left')?.id).toBe('c');
    expect(neighbourPane(w, 'b', 'right')).toBeUndefined();
    expect(neighbourPane(w, 'c', 'down')).toBeUndefined();
    expect(neighbourPane(w, '', 'right')?.id).toBe('a');
  });

  it('splits a command line as a shell splits plain words', () => {
    expect(splitCommandLine('  npm run dev ')).toEqual(['npm', 'run', 'dev']);
    expect(splitCommandLine(`python3 -c 'print("hi there")'`)).toEqual(['python3', '-c', 'print("hi there")']);
    expect(splitCommandLine('echo "a \\"b\\" c" d\\ e ""')).toEqual(['echo', 'a "b" c', 'd e', '']);
    expect(splitCommandLine('')).toEqual([]);
    expect(() => splitCommandLine(`echo 'oops`)).toThrow(/unclosed single quote/);
  });

  it('asks about what runs in words, or with the backend sentence when the list is unknown', () => {
    expect(convertQuestion('terminal', ['node'], '')).toBe(
      '"node" is running in this pane. Converting it to a terminal pane ends it. Convert anyway?',
    );
    expect(convertQuestion('browser', undefined, 'force: vim is running in pane a')).toBe(
      'vim is running in pane a. Converting it to a browser pane ends what runs. Convert anyway?',
    );
  });
});
