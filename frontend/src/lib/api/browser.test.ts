import { describe, expect, it, vi } from 'vitest';
import { parseBrowserEvent } from './browser';
import { normalizeBrowserTab, normalizePageInfo } from './types';
import { bothDoors } from './transports.fixture';
// Go's real answers (backend/api TestGoldenBrowserAnswers, a headless Chromium on a local page).
import browserOpen from './testdata/BrowserOpen.json';
import browserTabs from './testdata/BrowserTabs.json';
import browserNewTab from './testdata/BrowserNewTab.json';
import browserNavigate from './testdata/BrowserNavigate.json';

const tab = {
  paneId: 'p1',
  tabId: 'btab-1',
  workspaceId: 'w1',
  url: 'https://example.com/',
  title: 'Example',
  loading: false,
  crashed: false,
  discarded: false,
  active: true,
  canGoBack: true,
  canGoForward: false,
};

describe('parseBrowserEvent', () => {
  it('reads a frame, keeping the JPEG as base64', () => {
    const ev = parseBrowserEvent({
      topic: 'browser',
      type: 'frame',
      data: { paneId: 'p1', tabId: 'btab-1', data: '/9j/4AAQ', width: 800, height: 600, scrollX: 0, scrollY: 120, captured: '2025-01-01T00:00:00Z' },
    });
    expect(ev).toEqual({
      type: 'frame',
      frame: { paneId: 'p1', tabId: 'btab-1', data: '/9j/4AAQ', width: 800, height: 600, scrollX: 0, scrollY: 120 },
    });
  });

  it('reads an error for a pane', () => {
    expect(parseBrowserEvent({ topic: 'browser', type: 'error', data: { paneId: 'p1', error: 'no browser pane "p1"' } })).toEqual({
      type: 'error',
      paneId: 'p1',
      error: 'no browser pane "p1"',
    });
  });

  it('reads every tab event kind, with its detail', () => {
    for (const kind of ['opened', 'closed', 'activated', 'url', 'title', 'loading', 'crashed', 'reconnected', 'discarded', 'download', 'dialog']) {
      const ev = parseBrowserEvent({ topic: 'browser', type: kind, data: { kind, tab, detail: kind === 'download' ? '/d/file.zip' : undefined } });
      expect(ev).toMatchObject({ type: 'tab', kind, tab });
    }
    expect(parseBrowserEvent({ topic: 'browser', type: 'download', data: { kind: 'download', tab, detail: '/d/f' } })).toMatchObject({ detail: '/d/f' });
  });

  it('ignores other topics and unknown kinds, and warns about malformed events', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(parseBrowserEvent({ topic: 'terminal', type: 'frame', data: {} })).toBeNull();
    expect(parseBrowserEvent({ topic: 'browser', type: 'mystery', data: { kind: 'mystery', tab } })).toBeNull();
    expect(warn).not.toHaveBeenCalled();
    expect(parseBrowserEvent({ topic: 'browser', type: 'frame', data: { paneId: 'p1' } })).toBeNull();
    expect(parseBrowserEvent({ topic: 'browser', type: 'url', data: { kind: 'url', tab: { paneId: 'p1' } } })).toBeNull();
    expect(warn).toHaveBeenCalledTimes(2);
    warn.mockRestore();
  });
});

describe('browser wire normalisers', () => {
  it('fill in what Go or a transport left out', () => {
    expect(normalizeBrowserTab({ paneId: 'p1', tabId: 't' })).toEqual({
      paneId: 'p1',
      tabId: 't',
      workspaceId: '',
      url: '',
      title: '',
      loading: false,
      crashed: false,
      discarded: false,
      active: false,
      canGoBack: false,
      canGoForward: false,
      prompt: null,
    });
    expect(
      normalizeBrowserTab({ paneId: 'p1', tabId: 't', prompt: { kind: 'certificate', url: 'https://x/', error: 'net::ERR_CERT_DATE_INVALID' } }).prompt,
    ).toEqual({ kind: 'certificate', url: 'https://x/', error: 'net::ERR_CERT_DATE_INVALID', proxy: false, realm: undefined, scheme: undefined });
    expect(normalizeBrowserTab({ paneId: 'p1', tabId: 't', prompt: { kind: 'popup' } }).prompt).toBeNull();
    expect(normalizePageInfo({ tabId: 't', url: 'u', title: '', loading: false })).toEqual({ tabId: 't', url: 'u', title: '', loading: false });
    expect(normalizePageInfo({ tabId: 't', url: 'u', title: 'x', loading: true, status: 404, download: true })).toEqual({
      tabId: 't',
      url: 'u',
      title: 'x',
      loading: true,
      status: 404,
      download: true,
    });
  });
});

describe('browser pane calls on both transports', () => {
  const answers = {
    BrowserOpen: browserOpen,
    BrowserTabs: browserTabs,
    BrowserNewTab: browserNewTab,
    BrowserActivate: browserTabs.tabs[0],
    BrowserReconnect: browserTabs.tabs[0],
    BrowserNavigate: browserNavigate,
    BrowserBack: browserNavigate,
    BrowserForward: browserNavigate,
    BrowserReload: browserNavigate,
  };

  it('sends each as its call name and arguments, and reads what Go answers', async () => {
    for (const { door, api, sent } of bothDoors(answers)) {
      const opened = await api.browserOpen('pane-0', 'http://127.0.0.1:1/first', 800, 600);
      expect(opened, door).toEqual([{ ...browserOpen.tabs[0], prompt: null }]);
      const tabs = await api.browserTabs('pane-0');
      expect(tabs.map((t) => [t.tabId, t.active, t.url])).toEqual([
        ['btab-1', false, 'http://127.0.0.1:1/second'],
        ['btab-2', true, 'http://127.0.0.1:1/third'],
      ]);
      expect(await api.browserNewTab('pane-0', 'http://127.0.0.1:1/third')).toMatchObject({ tabId: 'btab-2', active: true, prompt: null });
      await api.browserCloseTab('pane-0', 'btab-2');
      expect(await api.browserActivate('pane-0', 'btab-1')).toMatchObject({ tabId: 'btab-1', canGoBack: true });
      const page = await api.browserNavigate('pane-0', 'http://127.0.0.1:1/second');
      expect(page).toEqual({ tabId: 'btab-1', url: 'http://127.0.0.1:1/second', title: browserNavigate.title, status: 200, loading: false });
      await api.browserBack('pane-0');
      await api.browserForward('pane-0');
      await api.browserReload('pane-0');
      await api.browserViewport('pane-0', 1024, 700);
      expect(await api.browserReconnect('pane-0')).toMatchObject({ tabId: 'btab-1', crashed: false });
      await api.browserAnswerPrompt('pane-0', { proceed: true, username: 'ada', password: 'pw' });
      expect(sent(), door).toEqual([
        ['BrowserOpen', { paneId: 'pane-0', url: 'http://127.0.0.1:1/first', width: 800, height: 600 }],
        ['BrowserTabs', { paneId: 'pane-0' }],
        ['BrowserNewTab', { paneId: 'pane-0', url: 'http://127.0.0.1:1/third' }],
        ['BrowserCloseTab', { paneId: 'pane-0', tabId: 'btab-2' }],
        ['BrowserActivate', { paneId: 'pane-0', tabId: 'btab-1' }],
        ['BrowserNavigate', { paneId: 'pane-0', url: 'http://127.0.0.1:1/second' }],
        ['BrowserBack', { paneId: 'pane-0' }],
        ['BrowserForward', { paneId: 'pane-0' }],
        ['BrowserReload', { paneId: 'pane-0' }],
        ['BrowserViewport', { paneId: 'pane-0', width: 1024, height: 700 }],
        ['BrowserReconnect', { paneId: 'pane-0' }],
        ['BrowserAnswerPrompt', { paneId: 'pane-0', answer: { proceed: true, username: 'ada', password: 'pw' } }],
      ]);
    }
  });

  it("passes on a navigation's failure verbatim, alike on both doors", async () => {
    const refusal = { status: 502, body: { error: 'could not load https://nope.invalid/: net::ERR_NAME_NOT_RESOLVED' } };
    for (const { door, api } of bothDoors({}, refusal)) {
      const err = await api.browserNavigate('pane-0', 'nope.invalid').catch((e) => e);
      expect(err.message, door).toBe(refusal.body.error);
    }
  });
});
