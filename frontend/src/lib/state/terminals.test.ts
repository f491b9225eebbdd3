import { describe, expect, it, vi } from 'vitest';
import type { Backend, BackendEvent, TabInfo } from '../api';
import { terminalTab as tab } from '../api/tabs.fixture';
import { liveBackend } from './live.fixture';
import { applyTabEvent, TerminalStore } from './terminals.svelte';

const tabEvent = (kind: string, t: TabInfo): BackendEvent => ({ topic: 'terminal', type: 'tab', data: { kind, tab: t } });

function fakeBackend(over: Partial<Backend> = {}) {
  return liveBackend({
    terminalOpen: vi.fn(async () => [tab('t1', { active: true })]),
    terminalTabs: vi.fn(async () => [tab('t1', { active: true })]),
    terminalNewTab: vi.fn(async () => tab('t2', { active: true })),
    terminalActivate: vi.fn(async () => {}),
    terminalCloseTab: vi.fn(async () => {}),
    terminalRestart: vi.fn(async () => {}),
    terminalSetBroadcast: vi.fn(async () => {}),
    terminalAttach: vi.fn(async () => new Uint8Array()),
    terminalDetach: vi.fn(async () => {}),
    terminalInput: vi.fn(),
    terminalResize: vi.fn(),
    ...over,
  });
}

describe('applyTabEvent', () => {
  const three = [tab('a', { active: true }), tab('b'), tab('c')];

  it('adds an opened tab, which becomes the active one', () => {
    const next = applyTabEvent(three, 'opened', tab('d', { active: true }));
    expect(next.map((t) => `${t.tabId}${t.active ? '*' : ''}`)).toEqual(['a', 'b', 'c', 'd*']);
  });

  it('moves the active mark on activated', () => {
    const next = applyTabEvent(three, 'activated', tab('c'));
    expect(next.map((t) => t.active)).toEqual([false, false, true]);
  });

  it('takes the new state of an exited tab without losing the active mark', () => {
    const next = applyTabEvent(three, 'exited', tab('a', { running: false, exitCode: 0, active: false }));
    expect(next[0]).toMatchObject({ tabId: 'a', running: false, exitCode: 0, active: true });
    expect(next.filter((t) => t.active)).toHaveLength(1);
  });

  it('when the active tab closes, makes its neighbour active as the backend does', () => {
    const midActive = [tab('a'), tab('b', { active: true }), tab('c')];
    expect(applyTabEvent(midActive, 'closed', tab('b')).map((t) => `${t.tabId}${t.active ? '*' : ''}`)).toEqual(['a', 'c*']);
    const lastActive = [tab('a'), tab('b'), tab('c', { active: true })];
    expect(applyTabEvent(lastActive, 'closed', tab('c')).map((t) => `${t.tabId}${t.active ? '*' : ''}`)).toEqual(['a', 'b*']);
    expect(applyTabEvent(three, 'closed', tab('b')).map((t) => `${t.tabId}${t.active ? '*' : ''}`)).toEqual(['a*', 'c']);
    expect(applyTabEvent([tab('a', { active: true })], 'closed', tab('a'))).toEqual([]);
  });
});

describe('TerminalStore', () => {
  it('opens a pane and follows its tab events', async () => {
    const { backend, emit } = fakeBackend();
    const store = new TerminalStore(backend, vi.fn());
    store.sync();
    await store.open('p1', 100, 30);
    expect(backend.terminalOpen).toHaveBeenCalledWith('p1', 100, 30);
    expect(store.activeTab('p1')?.tabId).toBe('t1');

    emit(tabEvent('opened', tab('t2', { active: true })));
    expect(store.tabs('p1').map((t) => t.tabId)).toEqual(['t1', 't2']);
    expect(store.activeTab('p1')?.tabId).toBe('t2');
    emit(tabEvent('exited', tab('t2', { running: false, exitCode: 130, active: true })));
    expect(store.activeTab('p1')).toMatchObject({ running: false, exitCode: 130 });
    emit(tabEvent('closed', tab('t2')));
    expect(store.activeTab('p1')?.tabId).toBe('t1');
  });

  it('learns the broadcast flag from the tabs it opens (a reload has no event for it)', async () => {
    const { backend, emit } = fakeBackend({
      terminalOpen: vi.fn(async () => [tab('t1', { active: true, broadcast: true })]),
    } as Partial<Backend>);
    const store = new TerminalStore(backend, vi.fn());
    store.sync();
    await store.open('p1', 80, 24);
    expect(store.isBroadcast('p1')).toBe(true);
    // A tab event carries one tab and must not clear the flag.
    emit(tabEvent('title', tab('t1', { active: true, title: 'vim' })));
    expect(store.isBroadcast('p1')).toBe(true);
    emit({ topic: 'terminal', type: 'broadcast', data: { paneId: 'p1', include: false } });
    expect(store.isBroadcast('p1')).toBe(false);
  });

  it('asks for the tabs again when an event arrived while open was in flight', async () => {
    let finish!: (tabs: TabInfo[]) => void;
    const { backend, emit } = fakeBackend({
      terminalOpen: vi.fn(() => new Promise<TabInfo[]>((r) => (finish = r))),
      terminalTabs: vi.fn(async () => [tab('t1'), tab('t2', { active: true })]),
    });
    const store = new TerminalStore(backend, vi.fn());
    store.sync();
    const opening = store.open('p1', 80, 24);
    emit(tabEvent('opened', tab('t2', { active: true })));
    finish([tab('t1', { active: true })]); // older than the event
    await opening;
    expect(backend.terminalTabs).toHaveBeenCalledWith('p1');
    expect(store.tabs('p1').map((t) => t.tabId)).toEqual(['t1', 't2']);
    expect(store.activeTab('p1')?.tabId).toBe('t2');
  });

  it('routes decoded output only to the listeners of that tab, until they stop', () => {
    const { backend, emit } = fakeBackend();
    const store = new TerminalStore(backend, vi.fn());
    store.sync();
    const got: Array<[string, boolean]> = [];
    const stop = store.onOutput('p1', 't1', (data, resync) => got.push([new TextDecoder().decode(data), resync]));
    const out = (tabId: string, text: string, resync = false): BackendEvent => ({
      topic: 'terminal',
      type: 'output',
      data: { paneId: 'p1', tabId, data: btoa(text), resync },
    });
    emit(out('t1', 'hello\r\n'));
    emit(out('t2', 'not mine'));
    emit(out('t1', 'whole screen', true));
    stop();
    emit(out('t1', 'after stop'));
    expect(got).toEqual([
      ['hello\r\n', false],
      ['whole screen', true],
    ]);
  });

  it('tracks broadcast flags from events and its own calls, and counts them per workspace', async () => {
    const { backend, emit } = fakeBackend();
    const store = new TerminalStore(backend, vi.fn());
    store.sync();
    emit({ topic: 'terminal', type: 'broadcast', data: { paneId: 'p1', include: true } });
    await store.toggleBroadcast('p2');
    expect(backend.terminalSetBroadcast).toHaveBeenCalledWith('p2', true);
    expect(store.broadcastCount(['p1', 'p2', 'p3'])).toBe(2);
    expect(store.broadcastCount(['p3'])).toBe(0);
    await store.toggleBroadcast('p1');
    expect(backend.terminalSetBroadcast).toHaveBeenLastCalledWith('p1', false);
    expect(store.isBroadcast('p1')).toBe(false);
  });

  it('reports a failed action and changes nothing', async () => {
    const report = vi.fn();
    const { backend } = fakeBackend({ terminalSetBroadcast: vi.fn(async () => Promise.reject(new Error('pane gone: restart it'))) });
    const store = new TerminalStore(backend, report);
    await store.setBroadcast('p1', true);
    expect(report).toHaveBeenCalledWith(new Error('pane gone: restart it'));
    expect(store.isBroadcast('p1')).toBe(false);
  });

  it('shows a new tab and an activation at once', async () => {
    const { backend } = fakeBackend();
    const store = new TerminalStore(backend, vi.fn());
    await store.open('p1', 80, 24);
    await store.newTab('p1', 80, 24);
    expect(store.activeTab('p1')?.tabId).toBe('t2');
    await store.activate('p1', 't1');
    expect(backend.terminalActivate).toHaveBeenCalledWith('p1', 't1');
    expect(store.activeTab('p1')?.tabId).toBe('t1');
    await store.closeTab('p1', 't1');
    expect(store.tabs('p1').map((t) => `${t.tabId}${t.active ? '*' : ''}`)).toEqual(['t2*']);
  });

  it('re-reads the tabs of known panes when the connection comes back', async () => {
    const { backend, setConn } = fakeBackend();
    const store = new TerminalStore(backend, vi.fn());
    store.sync();
    setConn('connected');
    await store.open('p1', 80, 24);
    expect(backend.terminalTabs).not.toHaveBeenCalled();
    setConn('disconnected');
    setConn('connected');
    await vi.waitFor(() => expect(backend.terminalTabs).toHaveBeenCalledWith('p1'));
  });

  it('detaches best effort: a tab that is gone is not an error', async () => {
    const report = vi.fn();
    const { backend } = fakeBackend({ terminalDetach: vi.fn(async () => Promise.reject(new Error('no such tab'))) });
    const store = new TerminalStore(backend, report);
    store.detach('p1', 't9');
    await Promise.resolve();
    expect(report).not.toHaveBeenCalled();
  });

  it('keeps what events said about a tab a call opened when they came before its answer', async () => {
    let answer: (t: TabInfo) => void = () => {};
    const { backend, emit } = fakeBackend({
      terminalOpenSSH: vi.fn(() => new Promise<TabInfo>((r) => (answer = r))),
    } as Partial<Backend>);
    const store = new TerminalStore(backend, vi.fn());
    store.sync();
    await store.open('p1', 80, 24);
    const opening = store.openSSH('p1', 'ssh-1', 80, 24);
    // The connection failed at once: the tab exited before the call answered.
    emit(tabEvent('exited', tab('t5', { running: false, exitCode: 255, remote: 'me@box' })));
    answer(tab('t5', { running: true, remote: 'me@box' }));
    await opening;
    expect(store.activeTab('p1')).toMatchObject({ tabId: 't5', running: false, exitCode: 255, active: true });
    expect(backend.terminalOpenSSH).toHaveBeenCalledWith('p1', 'ssh-1', 80, 24);
  });
});
