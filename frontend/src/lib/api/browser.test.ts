import { describe, expect, it, vi } from 'vitest';
import { parseBrowserEvent } from './browser';
import { normalizeBrowserTab, normalizePageInfo } from './types';

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
