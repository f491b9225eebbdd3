import { describe, expect, it, vi } from 'vitest';
import type { Backend, BackendEvent, BrowserTab } from '../api';
import { BackendError } from '../api';
import { browserTab as tab } from '../api/tabs.fixture';
import { applyBrowserEvent, BrowserStore } from './browsers.svelte';
import { liveBackend } from './live.fixture';

const tabEvent = (kind: string, t: BrowserTab, detail?: string): BackendEvent => ({
  topic: 'browser',
  type: kind,
  data: { kind, tab: t, detail },
});

function fakeBackend(over: Partial<Backend> = {}) {
  return liveBackend({
    browserOpen: vi.fn(async () => [tab('b1', { active: true })]),
    browserTabs: vi.fn(async () => [tab('b1', { active: true })]),
    browserNewTab: vi.fn(async () => tab('b2', { active: true })),
    browserCloseTab: vi.fn(async () => {}),
    browserActivate: vi.fn(async (_p: string, id: string) => tab(id, { active: true, url: 'https://two.example/' })),
    browserNavigate: vi.fn(async (_p: string, url: string) => ({ tabId: 'b1', url: `https://${url}/`, title: 'Example', loading: false })),
    browserBack: vi.fn(async () => ({ tabId: 'b1', url: 'https://back.example/', title: 'Back', loading: false })),
    browserForward: vi.fn(),
    browserReload: vi.fn(),
    browserViewport: vi.fn(async () => {}),
    browserReconnect: vi.fn(async () => tab('b1', { active: true, url: 'https://example.com/' })),
    browserWatch: vi.fn(),
    browserUnwatch: vi.fn(),
    browserInput: vi.fn(),
    ...over,
  });
}

const marks = (tabs: BrowserTab[]) => tabs.map((t) => `${t.tabId}${t.active ? '*' : ''}`);

describe('applyBrowserEvent', () => {
  const three = [tab('a', { active: true }), tab('b'), tab('c')];

  it('adds an opened tab, which becomes the active one', () => {
    expect(marks(applyBrowserEvent(three, 'opened', tab('d', { active: true })))).toEqual(['a', 'b', 'c', 'd*']);
  });

  it('moves the active mark on activated, taking the tab state with it', () => {
    const next = applyBrowserEvent(three, 'activated', tab('c', { url: 'https://c/' }));
    expect(marks(next)).toEqual(['a', 'b', 'c*']);
    expect(next[2].url).toBe('https://c/');
  });

  it('takes a url, title, loading or crashed change without losing the active mark', () => {
    const next = applyBrowserEvent(three, 'crashed', tab('a', { crashed: true, active: false }));
    expect(next[0]).toMatchObject({ tabId: 'a', crashed: true, active: true });
    expect(marks(applyBrowserEvent(three, 'title', tab('b', { title: 'B' })))).toEqual(['a*', 'b', 'c']);
  });

  it('when the active tab closes, shows its neighbour as the backend does', () => {
    expect(marks(applyBrowserEvent([tab('a'), tab('b', { active: true }), tab('c')], 'closed', tab('b')))).toEqual(['a', 'c*']);
    expect(marks(applyBrowserEvent([tab('a'), tab('b', { active: true })], 'closed', tab('b')))).toEqual(['a*']);
    expect(applyBrowserEvent([tab('a', { active: true })], 'closed', tab('a'))).toEqual([]);
  });
});

describe('BrowserStore', () => {
  it('opens a pane and follows tab events', async () => {
    const { backend, emit } = fakeBackend();
    const store = new BrowserStore(backend);
    store.sync();
    await store.open('p1', 800, 600);
    expect(backend.browserOpen).toHaveBeenCalledWith('p1', '', 800, 600);
    expect(store.activeTab('p1')?.tabId).toBe('b1');
    emit(tabEvent('url', tab('b1', { url: 'https://example.com/', canGoBack: true })));
    expect(store.activeTab('p1')).toMatchObject({ url: 'https://example.com/', canGoBack: true, active: true });
    emit(tabEvent('opened', tab('b2', { active: true })));
    expect(marks(store.tabs('p1'))).toEqual(['b1', 'b2*']);
  });

  it('routes frames to the listeners of their pane only, never into state', () => {
    const { backend, emit } = fakeBackend();
    const store = new BrowserStore(backend);
    store.sync();
    const got: string[] = [];
    const stop = store.onFrame('p1', (f) => got.push(f.data));
    store.onFrame('p2', () => got.push('wrong pane'));
    const frame = (paneId: string, data: string): BackendEvent => ({ topic: 'browser', type: 'frame', data: { paneId, tabId: 'b1', data, width: 10, height: 10 } });
    emit(frame('p1', 'AAAA'));
    stop();
    emit(frame('p1', 'BBBB'));
    expect(got).toEqual(['AAAA']);
    expect(store.known('p1')).toBe(false);
  });

  it('shows errors, downloads and dialogs as the pane notice, and dismisses them', () => {
    const { backend, emit } = fakeBackend();
    const store = new BrowserStore(backend);
    store.sync();
    emit({ topic: 'browser', type: 'error', data: { paneId: 'p1', error: 'unknown key "Foo"' } });
    expect(store.notice('p1')).toEqual({ kind: 'error', message: 'unknown key "Foo"' });
    emit(tabEvent('download', tab('b1'), '/data/downloads/report.pdf'));
    expect(store.notice('p1')).toEqual({ kind: 'info', message: 'Downloaded to /data/downloads/report.pdf' });
    emit(tabEvent('dialog', tab('b1'), 'alert dialog "hi" accepted'));
    expect(store.notice('p1')?.message).toBe('Alert dialog "hi" accepted');
    store.dismissNotice('p1');
    expect(store.notice('p1')).toBeUndefined();
  });

  it("navigates the active tab, shows where it arrived, and puts a failure in the pane", async () => {
    const { backend } = fakeBackend();
    const store = new BrowserStore(backend);
    await store.open('p1', 800, 600);
    await store.navigate('p1', '  example.com ');
    expect(backend.browserNavigate).toHaveBeenCalledWith('p1', 'example.com');
    expect(store.activeTab('p1')).toMatchObject({ url: 'https://example.com/', title: 'Example', loading: false });
    await store.navigate('p1', '   ');
    expect(backend.browserNavigate).toHaveBeenCalledTimes(1);

    (backend.browserNavigate as ReturnType<typeof vi.fn>).mockRejectedValueOnce(new BackendError('could not load https://nope/: net::ERR_NAME_NOT_RESOLVED'));
    await expect(store.navigate('p1', 'nope')).resolves.toBeUndefined();
    expect(store.notice('p1')).toEqual({ kind: 'error', message: 'could not load https://nope/: net::ERR_NAME_NOT_RESOLVED' });
    expect(store.activeTab('p1')?.loading).toBe(false);
    await store.back('p1');
    expect(store.notice('p1')).toBeUndefined(); // a new navigation takes the old error away
    expect(store.activeTab('p1')?.url).toBe('https://back.example/');
  });

  it('adds, activates, closes and reconnects tabs', async () => {
    const { backend } = fakeBackend();
    const store = new BrowserStore(backend);
    await store.open('p1', 800, 600);
    await store.newTab('p1');
    expect(backend.browserNewTab).toHaveBeenCalledWith('p1', '');
    expect(marks(store.tabs('p1'))).toEqual(['b1', 'b2*']);
    await store.activate('p1', 'b1');
    expect(marks(store.tabs('p1'))).toEqual(['b1*', 'b2']);
    expect(store.activeTab('p1')?.url).toBe('https://two.example/');
    await store.closeTab('p1', 'b2');
    expect(marks(store.tabs('p1'))).toEqual(['b1*']);
    await store.reconnect('p1');
    expect(backend.browserReconnect).toHaveBeenCalledWith('p1');
    expect(store.activeTab('p1')?.url).toBe('https://example.com/');
  });

  it('re-reads the tabs of known panes when the connection comes back', async () => {
    const { backend, setConn } = fakeBackend();
    const store = new BrowserStore(backend);
    store.sync();
    setConn('connected');
    await store.open('p1', 800, 600);
    (backend.browserTabs as ReturnType<typeof vi.fn>).mockResolvedValueOnce([tab('b1', { crashed: true, active: true })]);
    setConn('disconnected');
    setConn('connected');
    await vi.waitFor(() => expect(store.activeTab('p1')?.crashed).toBe(true));
    expect(backend.browserTabs).toHaveBeenCalledWith('p1');
  });

  it('does not apply an older open answer over a newer event', async () => {
    let answer: (tabs: BrowserTab[]) => void = () => {};
    const { backend, emit } = fakeBackend({
      browserOpen: vi.fn(() => new Promise<BrowserTab[]>((r) => (answer = r))),
      browserTabs: vi.fn(async () => [tab('b1', { active: true, title: 'fresh' })]),
    });
    const store = new BrowserStore(backend);
    store.sync();
    const opened = store.open('p1', 800, 600);
    emit(tabEvent('title', tab('b1', { active: true, title: 'fresh' })));
    answer([tab('b1', { active: true, title: 'stale' })]);
    await opened;
    expect(store.activeTab('p1')?.title).toBe('fresh');
  });

  it('shows a link in a pane: navigates an open pane, opens one that has no tab yet', async () => {
    const { backend } = fakeBackend({
      browserOpen: vi.fn(async (_p: string, url: string) => [tab('b1', { active: true, url })]),
    });
    const store = new BrowserStore(backend);
    await store.show('p2', 'https://docs.example/');
    expect(backend.browserOpen).toHaveBeenCalledWith('p2', 'https://docs.example/', 0, 0);
    expect(backend.browserNavigate).not.toHaveBeenCalled();
    await store.show('p2', 'https://other.example/');
    expect(backend.browserNavigate).toHaveBeenCalledWith('p2', 'https://other.example/');
  });

  it('passes watch, unwatch, input and viewport through, with a viewport failure in the pane', async () => {
    const { backend } = fakeBackend({ browserViewport: vi.fn(async () => Promise.reject(new BackendError('viewport 0x0 is out of range'))) });
    const store = new BrowserStore(backend);
    store.watch('p1');
    store.input('p1', { type: 'text', text: 'hi' });
    store.unwatch('p1');
    store.viewport('p1', 0, 0);
    expect(backend.browserWatch).toHaveBeenCalledWith('p1');
    expect(backend.browserInput).toHaveBeenCalledWith('p1', { type: 'text', text: 'hi' });
    expect(backend.browserUnwatch).toHaveBeenCalledWith('p1');
    await vi.waitFor(() => expect(store.notice('p1')?.message).toBe('viewport 0x0 is out of range'));
  });

  it('keeps one viewport request per pane in flight and sends only the newest size after it', async () => {
    const answers: Array<() => void> = [];
    const browserViewport = vi.fn(() => new Promise<void>((resolve) => answers.push(resolve)));
    const { backend } = fakeBackend({ browserViewport });
    const store = new BrowserStore(backend);
    for (let w = 100; w <= 500; w += 100) store.viewport('p1', w, 300);
    store.viewport('p2', 640, 480);
    expect(browserViewport.mock.calls).toEqual([
      ['p1', 100, 300],
      ['p2', 640, 480],
    ]);
    answers[0]();
    await vi.waitFor(() => expect(browserViewport).toHaveBeenCalledTimes(3));
    expect(browserViewport).toHaveBeenLastCalledWith('p1', 500, 300);
    answers[2]();
    await new Promise((r) => setTimeout(r, 0));
    expect(browserViewport).toHaveBeenCalledTimes(3);
  });
});
