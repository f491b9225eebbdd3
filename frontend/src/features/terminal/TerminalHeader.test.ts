// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { describe, expect, it, vi } from 'vitest';
import type { Backend, TabInfo } from '../../lib/api';
import { terminalTab as tab } from '../../lib/api/tabs.fixture';
import { createAppContext } from '../../lib/state/context';
import Harness from './TerminalHeaderHarness.test.svelte';
import { switchCloseAndAdd } from '../../lib/ui/tabStrip.fixture';

async function setup(tabs: TabInfo[]) {
  const backend = {
    kind: 'web',
    terminalOpen: vi.fn(async () => tabs),
    terminalActivate: vi.fn(async () => {}),
    terminalCloseTab: vi.fn(async () => {}),
    terminalRestart: vi.fn(async () => {}),
    terminalNewTab: vi.fn(async () => tab('t9', { active: true })),
    terminalSetBroadcast: vi.fn(async () => {}),
    listSSHServers: vi.fn(async () => [
      { id: 'ssh-1', name: 'build box', host: 'b', port: 0, user: '', keyPath: '', passwordSet: false, createdAt: '', updatedAt: '' },
    ]),
    terminalOpenSSH: vi.fn(async () => tab('t-ssh', { active: true, remote: 'b' })),
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  await ctx.terminals.open('p1', 80, 24);
  render(Harness, { ctx, paneId: 'p1' });
  return { ctx, backend };
}

const tabs = () => screen.queryAllByTestId('terminal-tab');

describe('TerminalHeader', () => {
  it('shows the tabs with the active one marked, and no exit badge while the shell runs', async () => {
    await setup([tab('t1'), tab('t2', { active: true, title: 'vim' })]);
    expect(tabs().map((t) => [t.dataset.tabId, t.dataset.active, t.textContent?.trim()])).toEqual([
      ['t1', 'false', 'bash'],
      ['t2', 'true', 'vim'],
    ]);
    expect(screen.queryByTestId('terminal-exit-badge')).toBeNull();
    expect(screen.queryByTestId('terminal-restart')).toBeNull();
  });

  it('shows the exit code and restarts from the button', async () => {
    const { backend } = await setup([tab('t1', { active: true, running: false, exitCode: 3, confined: true })]);
    expect(screen.getByTestId('terminal-exit-badge').textContent).toBe('exited 3 — Ctrl+R to restart');
    expect(screen.getByTestId('terminal-confined-badge')).toBeTruthy();
    await fireEvent.click(screen.getByTestId('terminal-restart'));
    expect(backend.terminalRestart).toHaveBeenCalledWith('p1', 't1');
  });

  it('activates, closes and adds tabs', async () => {
    const { backend } = await setup([tab('t1', { active: true }), tab('t2')]);
    await switchCloseAndAdd('terminal', { activate: backend.terminalActivate, close: backend.terminalCloseTab });
    await vi.waitFor(() => expect(tabs().map((t) => t.dataset.tabId)).toEqual(['t2', 't9']));
    expect(backend.terminalNewTab).toHaveBeenCalledWith('p1', 80, 24);
  });

  it('toggles "include in broadcast", and follows broadcast events', async () => {
    const { ctx, backend } = await setup([tab('t1', { active: true })]);
    const toggle = screen.getByTestId('broadcast-toggle');
    expect(toggle.dataset.on).toBe('false');
    await fireEvent.click(toggle);
    await vi.waitFor(() => expect(toggle.dataset.on).toBe('true'));
    expect(backend.terminalSetBroadcast).toHaveBeenCalledWith('p1', true);
    ctx.terminals.handleEvent({ topic: 'terminal', type: 'broadcast', data: { paneId: 'p1', include: false } });
    flushSync();
    expect(toggle.dataset.on).toBe('false');
  });

  it('opens an SSH tab from the "New SSH tab" menu, and from the palette’s request', async () => {
    const { ctx, backend } = await setup([tab('t1', { active: true })]);
    await fireEvent.click(screen.getByTestId('terminal-ssh-menu'));
    await vi.waitFor(() => expect(screen.getAllByTestId('terminal-ssh-choice')).toHaveLength(1));
    const choice = screen.getByTestId('terminal-ssh-choice');
    expect(choice.dataset.serverId).toBe('ssh-1');
    expect(choice.textContent).toContain('New SSH tab → build box');
    await fireEvent.click(choice);
    expect(backend.terminalOpenSSH).toHaveBeenCalledWith('p1', 'ssh-1', 80, 24);
    await vi.waitFor(() => expect(tabs().map((t) => t.dataset.tabId)).toEqual(['t1', 't-ssh']));
    expect(screen.queryByTestId('terminal-ssh-choice')).toBeNull();

    ctx.ui.sshMenuPaneId = 'p1';
    flushSync();
    await vi.waitFor(() => expect(screen.getAllByTestId('terminal-ssh-choice')).toHaveLength(1));
    expect(ctx.ui.sshMenuPaneId).toBeNull();
    await fireEvent.keyDown(screen.getByTestId('terminal-ssh-list'), { key: 'Escape' });
    expect(screen.queryByTestId('terminal-ssh-list')).toBeNull();
  });
});
