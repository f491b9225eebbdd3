import { describe, expect, it, vi } from 'vitest';
import type { Backend, BackendEvent, ConnectionState, Workspace, WorkspaceList } from '../api';
import { BackendError } from '../api';
import { rowWorkspace } from '../api/workspace.fixture';
import { warningsDuring } from './live.fixture';
import { WorkspaceStore } from './workspaces.svelte';

function ws(id: string, over: Partial<Workspace> = {}): Workspace {
  const position = Number(id.replace(/\D/g, '')) || 0;
  return rowWorkspace(id, [{ id: `${id}-p0`, kind: 'terminal', label: 'shell' }], { position, ...over });
}

const at = (s: number) => `2025-01-01T00:00:${String(s).padStart(2, '0')}Z`;
const snapshot = (type: string, data: WorkspaceList): BackendEvent => ({ topic: 'workspaces', type, data });

/** A backend whose methods are vi.fn()s; events and connection changes are pushed by the test. */
function fakeBackend(over: Partial<Backend> = {}) {
  let emit: (e: BackendEvent) => void = () => {};
  let setConn: (s: ConnectionState) => void = () => {};
  const backend: Backend = {
    kind: 'web',
    version: vi.fn(async () => '1'),
    listWorkspaces: vi.fn(async () => ({ workspaces: [ws('w1')], activeId: 'w1' })),
    createWorkspace: vi.fn(),
    renameWorkspace: vi.fn(),
    deleteWorkspace: vi.fn(async () => {}),
    activateWorkspace: vi.fn(async () => {}),
    setGrid: vi.fn(),
    setWeights: vi.fn(),
    swapPanes: vi.fn(),
    updatePane: vi.fn(),
    exportWorkspace: vi.fn(async () => {}),
    importWorkspace: vi.fn(),
    createWorkspaceGrid: vi.fn(),
    focusPane: vi.fn(),
    toggleMaximizePane: vi.fn(),
    setPaneLaunch: vi.fn(),
    convertPane: vi.fn(),
    launchTemplates: vi.fn(async () => []),
    listProviders: vi.fn(),
    saveProvider: vi.fn(),
    deleteProvider: vi.fn(),
    setDefaultProviders: vi.fn(),
    testProvider: vi.fn(),
    testUnsavedProvider: vi.fn(),
    discoverProviders: vi.fn(),
    prices: vi.fn(),
    setPrices: vi.fn(),
    terminalOpen: vi.fn(),
    terminalNewTab: vi.fn(),
    terminalTabs: vi.fn(),
    terminalAttach: vi.fn(),
    terminalDetach: vi.fn(),
    terminalInput: vi.fn(),
    terminalResize: vi.fn(),
    terminalRestart: vi.fn(),
    terminalCloseTab: vi.fn(),
    terminalActivate: vi.fn(),
    terminalSetBroadcast: vi.fn(),
    browserOpen: vi.fn(),
    browserTabs: vi.fn(),
    browserNewTab: vi.fn(),
    browserCloseTab: vi.fn(),
    browserActivate: vi.fn(),
    browserNavigate: vi.fn(),
    browserBack: vi.fn(),
    browserForward: vi.fn(),
    browserReload: vi.fn(),
    browserViewport: vi.fn(),
    browserReconnect: vi.fn(),
    browserWatch: vi.fn(),
    browserUnwatch: vi.fn(),
    browserInput: vi.fn(),
    browserAnswerPrompt: vi.fn(),
    listSSHServers: vi.fn(),
    saveSSHServer: vi.fn(),
    deleteSSHServer: vi.fn(),
    terminalOpenSSH: vi.fn(),
    remoteSessions: vi.fn(),
    killRemoteSession: vi.fn(),
    goals: {} as Backend['goals'],
    chat: {} as Backend['chat'],
    recipes: {} as Backend['recipes'],
    logins: {} as Backend['logins'],
    fleets: {} as Backend['fleets'],
    catalog: {} as Backend['catalog'],
    extensions: {} as Backend['extensions'],
    review: {} as Backend['review'],
    subscribe: (h) => {
      emit = h;
      return () => (emit = () => {});
    },
    onConnectionChange: (h) => {
      setConn = h;
      return () => (setConn = () => {});
    },
    ...over,
  };
  return { backend, emit: (e: BackendEvent) => emit(e), setConn: (s: ConnectionState) => setConn(s) };
}

function store(over: Partial<Backend> = {}) {
  const fake = fakeBackend(over);
  const errors: string[] = [];
  const s = new WorkspaceStore(fake.backend, (err) => errors.push((err as Error).message));
  return { s, errors, ...fake };
}

describe('WorkspaceStore events', () => {
  it('applies each snapshot as the whole truth: membership, order and active workspace', () => {
    const { s, emit } = store();
    const stop = s.sync();
    expect(s.loaded).toBe(false);

    emit(snapshot('created', { workspaces: [ws('w1'), ws('w2')], activeId: 'w2' }));
    expect(s.loaded).toBe(true);
    expect(s.workspaces.map((w) => w.id)).toEqual(['w1', 'w2']);
    expect(s.active?.id).toBe('w2');

    emit(snapshot('updated', { workspaces: [ws('w2', { name: 'Renamed', updatedAt: at(5) }), ws('w1')], activeId: 'w1' }));
    expect(s.workspaces.map((w) => w.name)).toEqual(['Renamed', 'Workspace w1']);
    expect(s.active?.id).toBe('w1');

    emit(snapshot('deleted', { workspaces: [ws('w1')], activeId: 'w1' }));
    expect(s.workspaces.map((w) => w.id)).toEqual(['w1']);
    stop();
  });

  it('ignores other topics and malformed workspace events', () => {
    const { s, emit } = store();
    s.sync();
    const warned = warningsDuring(() => {
      emit({ topic: 'goals', type: 'started', data: { workspaces: [], activeId: '' } });
      emit({ topic: 'workspaces', type: 'updated', data: { nope: true } });
    });
    expect(s.loaded).toBe(false);
    expect(warned).toBe(1);
  });

  it('does not let a late, older snapshot roll back a newer call result', () => {
    const { s, emit } = store();
    s.sync();
    emit(snapshot('created', { workspaces: [ws('w1', { updatedAt: at(1) })], activeId: 'w1' }));
    s.applyWorkspace(ws('w1', { rows: 3, updatedAt: at(3) }));
    emit(snapshot('updated', { workspaces: [ws('w1', { rows: 2, updatedAt: at(2) })], activeId: 'w1' }));
    expect(s.workspaces[0].rows).toBe(3);
    emit(snapshot('updated', { workspaces: [ws('w1', { rows: 4, updatedAt: at(4) })], activeId: 'w1' }));
    expect(s.workspaces[0].rows).toBe(4);
  });

  it('does not let a late call result roll back a newer snapshot', () => {
    const { s, emit } = store();
    s.sync();
    emit(snapshot('updated', { workspaces: [ws('w1', { cols: 5, updatedAt: at(5) })], activeId: 'w1' }));
    s.applyWorkspace(ws('w1', { cols: 2, updatedAt: at(2) }));
    expect(s.workspaces[0].cols).toBe(5);
  });

  it('re-reads the list whenever the live connection opens', async () => {
    const { s, setConn, backend } = store();
    s.sync();
    setConn('connecting');
    expect(backend.listWorkspaces).not.toHaveBeenCalled();
    setConn('connected');
    await vi.waitFor(() => expect(s.loaded).toBe(true));
    expect(backend.listWorkspaces).toHaveBeenCalledTimes(1);
  });

  it('drops a fetched list when an event arrived while it was in flight', async () => {
    let answer!: (l: WorkspaceList) => void;
    const { s, emit } = store({ listWorkspaces: () => new Promise((r) => (answer = r)) });
    s.sync();
    const loading = s.load();
    emit(snapshot('created', { workspaces: [ws('w1'), ws('w2')], activeId: 'w2' }));
    answer({ workspaces: [ws('w1')], activeId: 'w1' });
    await loading;
    expect(s.workspaces.map((w) => w.id)).toEqual(['w1', 'w2']);
    expect(s.activeId).toBe('w2');
  });
});

describe('WorkspaceStore actions', () => {
  it('adds a created workspace at its position and activates it', async () => {
    const { s, backend } = store({ createWorkspace: vi.fn(async () => ws('w2', { position: 1 })) });
    s.applySnapshot({ workspaces: [ws('w1', { position: 0 }), ws('w3', { position: 2 })], activeId: 'w1' });
    await s.create();
    expect(backend.createWorkspace).toHaveBeenCalledWith('');
    expect(s.workspaces.map((w) => w.id)).toEqual(['w1', 'w2', 'w3']);
    expect(backend.activateWorkspace).toHaveBeenCalledWith('w2');
    expect(s.activeId).toBe('w2');
  });

  it("reports the backend's error verbatim and leaves the state alone", async () => {
    const { s, errors } = store({
      setGrid: vi.fn(async () => {
        throw new BackendError('rows: must be between 1 and 6, got 9', { field: 'rows' });
      }),
    });
    s.applySnapshot({ workspaces: [ws('w1')], activeId: 'w1' });
    await expect(s.setGrid('w1', 9, 1)).resolves.toBeUndefined();
    expect(errors).toEqual(['rows: must be between 1 and 6, got 9']);
    expect(s.workspaces[0].rows).toBe(1);
  });

  it('does not bring back a workspace deleted before a call on it returned', async () => {
    const { s } = store({ renameWorkspace: vi.fn(async () => ws('w2', { name: 'late', updatedAt: at(9) })) });
    s.applySnapshot({ workspaces: [ws('w1')], activeId: 'w1' });
    await s.rename('w2', 'late');
    expect(s.workspaces.map((w) => w.id)).toEqual(['w1']);
  });

  it('after deleting, takes the next active workspace from the backend', async () => {
    const { s, backend } = store({
      listWorkspaces: vi.fn(async () => ({ workspaces: [ws('w1')], activeId: 'w1' })),
    });
    s.applySnapshot({ workspaces: [ws('w1'), ws('w2')], activeId: 'w2' });
    expect(await s.remove('w2')).toBe(true);
    expect(backend.deleteWorkspace).toHaveBeenCalledWith('w2', false);
    expect(s.workspaces.map((w) => w.id)).toEqual(['w1']);
    expect(s.active?.id).toBe('w1');
  });

  it('asks before a shrink that would end busy work, and forces it only when confirmed', async () => {
    const refusal = new BackendError(
      'shrinking the grid to 1 × 1 would end work in progress (Terminal 2.1: sleep running in tab 1 (bash)): confirm to end it, or let it finish first',
    );
    const setGrid = vi.fn(async (_id: string, _r: number, _c: number, force?: boolean) => {
      if (!force) throw refusal;
      return ws('w1', { rows: 1, updatedAt: at(5) });
    });
    const asked: string[][] = [];
    let answer = false;
    const fake = fakeBackend({ setGrid });
    const s = new WorkspaceStore(fake.backend, () => {}, async (_title, busy) => {
      asked.push(busy.map((p) => `${p.label}: ${p.busy.join(', ')}`));
      return answer;
    });
    s.applySnapshot({ workspaces: [ws('w1', { rows: 2 })], activeId: 'w1' });
    expect(await s.setGrid('w1', 1, 1)).toBeUndefined();
    expect(asked).toEqual([['Terminal 2.1: sleep running in tab 1 (bash)']]);
    expect(setGrid).toHaveBeenCalledTimes(1);
    expect(s.workspaces[0].rows).toBe(2);
    answer = true;
    expect((await s.setGrid('w1', 1, 1))?.rows).toBe(1);
    expect(setGrid).toHaveBeenLastCalledWith('w1', 1, 1, true);
  });

  it('cycles through workspaces in order, wrapping at both ends', async () => {
    const { s } = store();
    s.applySnapshot({ workspaces: [ws('w1'), ws('w2'), ws('w3')], activeId: 'w3' });
    await s.cycle(1);
    expect(s.activeId).toBe('w1');
    await s.cycle(-1);
    expect(s.activeId).toBe('w3');
    await s.activateNth(2);
    expect(s.activeId).toBe('w2');
    await s.activateNth(7);
    expect(s.activeId).toBe('w2');
  });
});
