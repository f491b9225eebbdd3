// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Backend, BrowserTab } from '../../lib/api';
import { browserTab } from '../../lib/api/tabs.fixture';
import { createAppContext } from '../../lib/state/context';
import { fakeLive } from '../../lib/state/live.fixture';
import Harness from './BrowserHarness.test.svelte';
import { NoopObserver, stubBrowserLayout } from './layout.fixture';
import { switchCloseAndAdd } from '../../lib/ui/tabStrip.fixture';

/** A tab showing example.com. */
const tab = (tabId: string, over: Partial<BrowserTab> = {}) => browserTab(tabId, { url: 'https://example.com/', title: 'Example', ...over });

// jsdom has no layout, observers or canvas: the test drives them.
let intersect: (visible: boolean) => void = () => {};
class FakeIntersectionObserver extends NoopObserver {
  constructor(private readonly cb: IntersectionObserverCallback) {
    super();
    intersect = (visible) => this.cb([{ isIntersecting: visible } as IntersectionObserverEntry], this as unknown as IntersectionObserver);
  }
}

beforeEach(() => {
  stubBrowserLayout(FakeIntersectionObserver);
  Object.defineProperty(HTMLElement.prototype, 'clientWidth', { configurable: true, get: () => 800 });
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 560 });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  delete (HTMLElement.prototype as { clientWidth?: number }).clientWidth;
  delete (HTMLElement.prototype as { clientHeight?: number }).clientHeight;
});

async function setup(tabs: BrowserTab[]) {
  const live = fakeLive();
  const backend = {
    kind: 'web',
    browserOpen: vi.fn(async () => tabs),
    browserTabs: vi.fn(async () => tabs),
    browserNewTab: vi.fn(async () => tab('b9', { active: true, url: 'about:blank', title: '' })),
    browserCloseTab: vi.fn(async () => {}),
    browserActivate: vi.fn(async (_p: string, id: string) => tab(id, { active: true })),
    browserNavigate: vi.fn(async (_p: string, url: string) => ({ tabId: 'b1', url, title: 'Went', loading: false })),
    browserBack: vi.fn(async () => ({ tabId: 'b1', url: 'https://back/', title: 'Back', loading: false })),
    browserForward: vi.fn(),
    browserReload: vi.fn(async () => ({ tabId: 'b1', url: 'https://example.com/', title: 'Example', loading: false })),
    browserViewport: vi.fn(async () => {}),
    browserReconnect: vi.fn(async () => tab('b1', { active: true })),
    browserWatch: vi.fn(),
    browserUnwatch: vi.fn(),
    browserInput: vi.fn(),
    browserAnswerPrompt: vi.fn(async () => {}),
    ...live.backend,
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.browsers.sync();
  const view = render(Harness, { ctx, paneId: 'p1' });
  await vi.waitFor(() => expect(backend.browserOpen).toHaveBeenCalled());
  await vi.waitFor(() => expect(ctx.browsers.tabs('p1').length).toBe(tabs.length));
  flushSync();
  return { ctx, backend, view, emit: live.emit };
}

const tabs = () => screen.queryAllByTestId('browser-tab');

describe('BrowserView', () => {
  it('opens the pane at its size and shows the URL, title and history buttons', async () => {
    const { backend } = await setup([tab('b1', { active: true, canGoBack: true })]);
    expect(backend.browserOpen).toHaveBeenCalledWith('p1', '', 800, 560);
    expect((screen.getByTestId('browser-url') as HTMLInputElement).value).toBe('https://example.com/');
    expect(screen.getByTestId('browser-title').textContent).toBe('Example');
    expect((screen.getByTestId('browser-back') as HTMLButtonElement).disabled).toBe(false);
    expect((screen.getByTestId('browser-forward') as HTMLButtonElement).disabled).toBe(true);
    const view = screen.getByTestId('browser-view');
    expect(view.dataset.paneId).toBe('p1');
    expect(view.dataset.frames).toBe('0');
  });

  it('watches while the pane is in view and the page visible, and stops when it unmounts', async () => {
    const { backend, view } = await setup([tab('b1', { active: true })]);
    expect(backend.browserWatch).not.toHaveBeenCalled();
    intersect(true);
    expect(backend.browserWatch).toHaveBeenCalledTimes(1);
    intersect(false);
    expect(backend.browserUnwatch).toHaveBeenCalledTimes(1);
    intersect(true);
    expect(backend.browserWatch).toHaveBeenCalledTimes(2);

    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
    expect(backend.browserUnwatch).toHaveBeenCalledTimes(2);
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'visible' });
    document.dispatchEvent(new Event('visibilitychange'));
    expect(backend.browserWatch).toHaveBeenCalledTimes(3);

    view.unmount();
    expect(backend.browserUnwatch).toHaveBeenCalledTimes(3);
    expect(backend.browserUnwatch).toHaveBeenLastCalledWith('p1');
  });

  it('asks the person to sign in when the page wants HTTP auth, and sends only their answer', async () => {
    const { backend, emit } = await setup([tab('b1', { active: true })]);
    expect(screen.queryByTestId('browser-prompt')).toBeNull();
    const asking = tab('b1', { active: true, prompt: { kind: 'auth', url: 'https://intranet.example/x', realm: 'lab', scheme: 'basic' } });
    emit({ topic: 'browser', type: 'prompt', data: { kind: 'prompt', tab: asking, detail: 'auth' } });
    flushSync();
    expect(screen.getByTestId('browser-prompt').textContent).toContain('intranet.example asks you to sign in (“lab”)');
    await fireEvent.click(screen.getByTestId('browser-prompt-proceed'));
    expect(screen.getByRole('alert').textContent).toContain('Enter the user name');
    expect(backend.browserAnswerPrompt).not.toHaveBeenCalled();
    await fireEvent.input(screen.getByTestId('browser-prompt-user'), { target: { value: 'ada' } });
    await fireEvent.input(screen.getByTestId('browser-prompt-password'), { target: { value: 'pw' } });
    await fireEvent.click(screen.getByTestId('browser-prompt-proceed'));
    expect(backend.browserAnswerPrompt).toHaveBeenCalledWith('p1', { proceed: true, username: 'ada', password: 'pw' });
    emit({ topic: 'browser', type: 'prompt', data: { kind: 'prompt', tab: tab('b1', { active: true }), detail: '' } });
    flushSync();
    expect(screen.queryByTestId('browser-prompt')).toBeNull();
  });

  it('asks before going on to a site with a bad certificate, and shows a refused answer', async () => {
    const { backend, emit } = await setup([tab('b1', { active: true })]);
    (backend.browserAnswerPrompt as ReturnType<typeof vi.fn>).mockRejectedValueOnce(new Error('the question was answered already'));
    const asking = tab('b1', { active: true, prompt: { kind: 'certificate', url: 'https://self.test/', error: 'net::ERR_CERT_AUTHORITY_INVALID' } });
    emit({ topic: 'browser', type: 'prompt', data: { kind: 'prompt', tab: asking, detail: 'certificate' } });
    flushSync();
    expect(screen.getByTestId('browser-prompt').textContent).toContain('ERR_CERT_AUTHORITY_INVALID');
    await fireEvent.click(screen.getByTestId('browser-prompt-proceed'));
    expect(backend.browserAnswerPrompt).toHaveBeenCalledWith('p1', { proceed: true });
    await vi.waitFor(() => expect(screen.getByRole('alert').textContent).toContain('answered already'));
  });

  it('navigates on Enter in the URL bar', async () => {
    const { backend } = await setup([tab('b1', { active: true })]);
    const url = screen.getByTestId('browser-url') as HTMLInputElement;
    await fireEvent.input(url, { target: { value: 'localhost:8080/app' } });
    await fireEvent.submit(url.form!);
    expect(backend.browserNavigate).toHaveBeenCalledWith('p1', 'localhost:8080/app');
    await vi.waitFor(() => expect(screen.getByTestId('browser-title').textContent).toBe('Went'));
    await fireEvent.click(screen.getByTestId('browser-back'));
    expect(backend.browserBack).toHaveBeenCalledWith('p1');
    await fireEvent.click(screen.getByTestId('browser-reload'));
    expect(backend.browserReload).toHaveBeenCalledWith('p1');
  });

  it('lists the tabs, switches, closes and adds them', async () => {
    const { backend } = await setup([tab('b1', { active: true }), tab('b2', { title: 'Two' })]);
    expect(tabs().map((t) => [t.dataset.tabId, t.dataset.active, t.textContent?.trim()])).toEqual([
      ['b1', 'true', 'Example'],
      ['b2', 'false', 'Two'],
    ]);
    await switchCloseAndAdd('browser', { activate: backend.browserActivate, close: backend.browserCloseTab });
    await vi.waitFor(() => expect(tabs().map((t) => t.textContent?.trim())).toEqual(['Example', 'New tab']));
  });

  it('offers Reconnect for a crashed tab', async () => {
    const { backend, emit } = await setup([tab('b1', { active: true })]);
    expect(screen.queryByTestId('browser-reconnect')).toBeNull();
    emit({ topic: 'browser', type: 'crashed', data: { kind: 'crashed', tab: tab('b1', { active: true, crashed: true }), detail: 'gone' } });
    flushSync();
    expect(screen.getByTestId('browser-crashed').textContent).toContain('This tab crashed');
    await fireEvent.click(screen.getByTestId('browser-reconnect'));
    expect(backend.browserReconnect).toHaveBeenCalledWith('p1');
    await vi.waitFor(() => expect(screen.queryByTestId('browser-reconnect')).toBeNull());
  });

  it("forwards keys only while the canvas has focus, and maps a click to the page's pixels", async () => {
    const { backend, emit } = await setup([tab('b1', { active: true })]);
    const canvas = screen.getByTestId('browser-view') as HTMLCanvasElement;
    // No frame yet: a click has nowhere to land.
    await fireEvent.mouseDown(canvas, { clientX: 10, clientY: 10, button: 0, detail: 1 });
    expect(backend.browserInput).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(canvas); // but it takes the keyboard

    await fireEvent.keyDown(canvas, { key: 'a', code: 'KeyA' });
    expect(backend.browserInput).toHaveBeenLastCalledWith('p1', { type: 'keydown', key: 'a', code: 'KeyA' });
    const url = screen.getByTestId('browser-url');
    await fireEvent.keyDown(url, { key: 'b', code: 'KeyB' });
    expect(backend.browserInput).toHaveBeenCalledTimes(1);

    // A frame of 1600×1120 CSS px shown in the 800×560 canvas: half size.
    vi.stubGlobal('createImageBitmap', async () => ({ width: 1600, height: 1120, close() {} }));
    vi.spyOn(canvas, 'getBoundingClientRect').mockReturnValue({ x: 0, y: 0, left: 0, top: 0, width: 800, height: 560, right: 800, bottom: 560, toJSON() {} });
    emit({ topic: 'browser', type: 'frame', data: { paneId: 'p1', tabId: 'b1', data: btoa('jpeg'), width: 1600, height: 1120 } });
    await vi.waitFor(() => expect(canvas.dataset.frames).toBe('1'));
    await fireEvent.mouseDown(canvas, { clientX: 100, clientY: 50, button: 0, detail: 1 });
    expect(backend.browserInput).toHaveBeenLastCalledWith('p1', { type: 'mousedown', x: 200, y: 100, button: 'left' });
    await fireEvent.mouseUp(window, { clientX: 100, clientY: 50, button: 0, buttons: 0 });
    expect(backend.browserInput).toHaveBeenLastCalledWith('p1', { type: 'mouseup', x: 200, y: 100, button: 'left' });
  });
});
