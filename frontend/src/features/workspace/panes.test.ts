// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BackendError, type Backend, type LaunchTemplate, type Pane, type Workspace } from '../../lib/api';
import { rowWorkspace } from '../../lib/api/workspace.fixture';
import { createAppContext } from '../../lib/state/context';
import { fakeLive } from '../../lib/state/live.fixture';
import { FOCUS_DEBOUNCE_MS } from '../../lib/state/panes.svelte';
import { stubBrowserLayout } from '../browser/layout.fixture';
import Harness from './PaneHarness.test.svelte';

const at = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, '0')}Z`;

function ws(over: Partial<Workspace> = {}, kinds: Array<Pane['kind']> = ['browser', 'browser']): Workspace {
  const panes = kinds.map((kind, i) => ({ id: `pane-${'abcd'[i]}`, kind, label: `Pane ${i + 1}` }));
  return rowWorkspace('w1', panes, { name: 'W', focusedPaneId: 'pane-a', createdAt: at(0), updatedAt: at(1), ...over });
}

const TEMPLATES: LaunchTemplate[] = [
  { id: 'shell', name: 'Shell', command: '', installed: true },
  { id: 'claude', name: 'Claude Code', command: 'claude', install: 'npm install -g @anthropic-ai/claude-code', installed: false },
  { id: 'python', name: 'Python', command: 'python3', installed: true },
  { id: 'custom', name: 'Custom command', command: '', installed: true },
];

beforeEach(() => stubBrowserLayout());

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function setup(start: Workspace, over: Record<string, unknown> = {}) {
  const live = fakeLive();
  let clock = 10;
  const backend = {
    kind: 'web',
    browserOpen: vi.fn(async () => []),
    browserTabs: vi.fn(async () => []),
    browserWatch: vi.fn(),
    browserUnwatch: vi.fn(),
    browserViewport: vi.fn(async () => {}),
    focusPane: vi.fn(async (_w: string, paneId: string) => ({ ...start, focusedPaneId: paneId, updatedAt: at(clock++) })),
    toggleMaximizePane: vi.fn(async (_w: string, paneId: string) => ({ ...start, maximizedPaneId: paneId, focusedPaneId: paneId, updatedAt: at(clock++) })),
    setPaneLaunch: vi.fn(async () => ({ ...start, updatedAt: at(clock++) })),
    convertPane: vi.fn(async () => ({ ...start, updatedAt: at(clock++) })),
    launchTemplates: vi.fn(async () => TEMPLATES),
    ...live.backend,
    ...over,
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.workspaces.sync();
  ctx.workspaces.applySnapshot({ workspaces: [start], activeId: start.id });
  const announce = (w: Workspace) => {
    live.emit({ topic: 'workspaces', type: 'updated', data: { workspaces: [w], activeId: w.id } });
    flushSync();
  };
  return { ctx, backend, announce };
}

const paneEl = (id: string) => document.querySelector<HTMLElement>(`[data-testid="pane"][data-pane-id="${id}"]`)!;
const attrs = (id: string) => {
  const el = paneEl(id);
  return { kind: el.dataset.kind, focused: el.dataset.focused, maximized: el.dataset.maximized, shown: !el.classList.contains('hidden') };
};

describe('pane headers and the grid', () => {
  it('shows each pane with its kind, title and a copyable id, and marks the focused one', async () => {
    const writeText = vi.fn(async () => {});
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    const { ctx } = setup(ws());
    render(Harness, { ctx });
    expect(attrs('pane-a')).toEqual({ kind: 'browser', focused: 'true', maximized: 'false', shown: true });
    expect(attrs('pane-b')).toEqual({ kind: 'browser', focused: 'false', maximized: 'false', shown: true });
    const a = paneEl('pane-a');
    expect(a.querySelector('[data-testid="pane-kind"]')?.textContent).toContain('Browser');
    expect(a.querySelector('[data-testid="pane-title"]')?.textContent).toBe('Pane 1');
    // A narrow pane (a 6 × 6 grid) cuts its title short: the tooltip says it whole.
    expect(a.querySelector('[data-testid="pane-title"]')?.getAttribute('title')).toContain('Pane 1');
    const chip = a.querySelector<HTMLElement>('[data-testid="pane-id"]')!;
    expect(chip.textContent).toBe('pane-a');
    await fireEvent.click(chip);
    expect(writeText).toHaveBeenCalledWith('pane-a');
    expect(chip.dataset.copied).toBe('true');
  });

  it('shows the pane the backend maximized alone, keeping the others mounted, and the grid again after', async () => {
    const { ctx, backend, announce } = setup(ws());
    render(Harness, { ctx });
    expect(document.querySelectorAll('[data-testid="col-divider"]').length).toBe(1);
    announce(ws({ maximizedPaneId: 'pane-b', focusedPaneId: 'pane-b', updatedAt: at(5) }));
    expect(attrs('pane-b')).toEqual({ kind: 'browser', focused: 'true', maximized: 'true', shown: true });
    expect(attrs('pane-a')).toEqual({ kind: 'browser', focused: 'false', maximized: 'false', shown: false });
    // Still mounted: its page view (and its tabs) live on.
    expect(paneEl('pane-a').querySelector('[data-testid="browser-view"]')).not.toBeNull();
    expect(document.querySelectorAll('[data-testid="col-divider"]').length).toBe(0);
    await fireEvent.click(paneEl('pane-b').querySelector('[data-testid="pane-restore"]')!);
    expect(backend.toggleMaximizePane).toHaveBeenCalledWith('w1', 'pane-b');
    // The backend's answer to the restore (newer than the fake's reply to the click).
    announce(ws({ maximizedPaneId: '', focusedPaneId: 'pane-b', updatedAt: at(30) }));
    expect(attrs('pane-a').shown).toBe(true);
    expect(attrs('pane-b').maximized).toBe('false');
  });

  it('a press in a pane focuses it at once and tells the backend, once', async () => {
    vi.useFakeTimers();
    const { ctx, backend } = setup(ws());
    render(Harness, { ctx });
    await fireEvent.pointerDown(paneEl('pane-b').querySelector('[data-testid="pane-header"]')!);
    await fireEvent.focusIn(paneEl('pane-b'));
    expect(attrs('pane-b').focused).toBe('true');
    expect(attrs('pane-a').focused).toBe('false');
    await vi.advanceTimersByTimeAsync(FOCUS_DEBOUNCE_MS);
    expect(backend.focusPane).toHaveBeenCalledTimes(1);
    expect(backend.focusPane).toHaveBeenCalledWith('w1', 'pane-b');
  });
});

describe('the keyboard follows the backend focus', () => {
  it('moves into the pane the agent focused, but never out of an input outside the panes', async () => {
    const { ctx, announce } = setup(ws());
    render(Harness, { ctx });
    announce(ws({ focusedPaneId: 'pane-b', updatedAt: at(5) }));
    await vi.waitFor(() => expect(paneEl('pane-b').contains(document.activeElement)).toBe(true));

    const chat = document.createElement('textarea');
    document.body.appendChild(chat);
    chat.focus();
    announce(ws({ focusedPaneId: 'pane-a', updatedAt: at(6) }));
    await new Promise((r) => setTimeout(r, 10));
    expect(attrs('pane-a').focused).toBe('true');
    expect(document.activeElement).toBe(chat);
    chat.remove();
  });
});

describe('pane menu', () => {
  const terminalWs = () => ws({}, ['terminal', 'browser']);

  async function openMenu(start: Workspace, pane: string, over: Record<string, unknown> = {}) {
    const s = setup(start, over);
    render(Harness, { ctx: s.ctx, menuFor: start.panes.find((p) => p.id === pane) });
    await fireEvent.click(screen.getByTestId('pane-menu'));
    return s;
  }

  it('maximizes and converts a terminal pane; offers only the conversion that applies', async () => {
    const { backend } = await openMenu(terminalWs(), 'pane-a');
    const list = screen.getByTestId('pane-menu-list');
    expect(list.dataset.paneId).toBe('pane-a');
    expect(screen.queryByTestId('pane-menu-convert-terminal')).toBeNull();
    expect(screen.getByTestId('pane-menu-maximize').textContent).toContain('Maximize');
    await fireEvent.click(screen.getByTestId('pane-menu-maximize'));
    expect(backend.toggleMaximizePane).toHaveBeenCalledWith('w1', 'pane-a');
    await fireEvent.click(screen.getByTestId('pane-menu'));
    expect(screen.getByTestId('pane-menu-maximize').textContent).toContain('Restore');
    await fireEvent.click(screen.getByTestId('pane-menu-convert-browser'));
    expect(backend.convertPane).toHaveBeenCalledWith('w1', 'pane-a', { kind: 'browser' });
  });

  it('asks before converting a pane something runs in, naming it, and re-sends with force on yes', async () => {
    const convertPane = vi.fn(async (_w: string, _p: string, req: { force?: boolean }) => {
      if (!req.force) throw new BackendError('vim is running in pane pane-a', { status: 409, field: 'force', busy: [{ paneId: 'pane-a', label: '', busy: ['vim'] }] });
      return terminalWs();
    });
    await openMenu(terminalWs(), 'pane-a', { convertPane });
    await fireEvent.click(screen.getByTestId('pane-menu-convert-browser'));
    const dialog = await screen.findByTestId('confirm-dialog');
    expect(dialog.textContent).toContain('"vim" is running in this pane. Converting it to a browser pane ends it. Convert anyway?');
    await fireEvent.click(screen.getByTestId('confirm-ok'));
    await vi.waitFor(() => expect(convertPane).toHaveBeenCalledTimes(2));
    expect(convertPane.mock.calls[1][2]).toEqual({ kind: 'browser', force: true });
  });

  it('lists the launch templates, says which are not installed and how to install them, and starts one', async () => {
    const { backend } = await openMenu(terminalWs(), 'pane-a');
    await fireEvent.click(screen.getByTestId('pane-menu-start-as'));
    await vi.waitFor(() => expect(screen.queryByTestId('launch-template-claude')).not.toBeNull());
    const claude = screen.getByTestId('launch-template-claude');
    expect(claude.dataset.installed).toBe('false');
    expect(claude.textContent).toContain('not installed');
    expect(screen.getByTestId('launch-template-install-claude').textContent).toContain('npm install -g @anthropic-ai/claude-code');
    expect(screen.getByTestId('launch-template-shell').dataset.current).toBe('true');
    await fireEvent.click(screen.getByTestId('launch-template-python'));
    expect(backend.setPaneLaunch).toHaveBeenCalledWith('w1', 'pane-a', { template: 'python' }, false);
  });

  it('starts a custom command typed in the menu, split into its words', async () => {
    const { backend } = await openMenu(terminalWs(), 'pane-a');
    await fireEvent.click(screen.getByTestId('pane-menu-start-as'));
    const input = await screen.findByTestId('launch-custom-input');
    await fireEvent.input(input, { target: { value: `npm run "dev server"` } });
    await fireEvent.click(screen.getByTestId('launch-custom-start'));
    expect(backend.setPaneLaunch).toHaveBeenCalledWith('w1', 'pane-a', { template: 'custom', command: 'npm', args: ['run', 'dev server'] }, false);
  });

  it('in a browser pane, converts to a terminal, or to one started from a template', async () => {
    const { backend } = await openMenu(terminalWs(), 'pane-b');
    expect(screen.queryByTestId('pane-menu-convert-browser')).toBeNull();
    await fireEvent.click(screen.getByTestId('pane-menu-start-as'));
    await fireEvent.click(await screen.findByTestId('launch-template-python'));
    expect(backend.convertPane).toHaveBeenCalledWith('w1', 'pane-b', { kind: 'terminal', template: 'python' });
    await fireEvent.click(screen.getByTestId('pane-menu'));
    await fireEvent.click(screen.getByTestId('pane-menu-convert-terminal'));
    expect(backend.convertPane).toHaveBeenLastCalledWith('w1', 'pane-b', { kind: 'terminal' });
  });
});
