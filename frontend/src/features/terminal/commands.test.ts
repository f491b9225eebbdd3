import { describe, expect, it, vi } from 'vitest';
import type { Backend, TabInfo } from '../../lib/api';
import { terminalTab } from '../../lib/api/tabs.fixture';
import { rowWorkspace } from '../../lib/api/workspace.fixture';
import { withShortcuts } from '../../lib/state/commands';
import { createAppContext } from '../../lib/state/context';
import { COMMAND } from '../../lib/state/keymap';
import { keyConditionHolds, newSSHTab, targetPaneId, terminalCommands } from './commands';

/** The pane's one tab, active. */
const tab = (paneId: string, over: Partial<TabInfo> = {}) => terminalTab(`${paneId}-t1`, { paneId, active: true, ...over });

function context(kinds: Array<'terminal' | 'browser'>) {
  const backend = {
    kind: 'web',
    terminalOpen: vi.fn(async (paneId: string) => [tab(paneId)]),
    terminalRestart: vi.fn(async () => {}),
    terminalSetBroadcast: vi.fn(async () => {}),
    terminalNewTab: vi.fn(async (paneId: string) => tab(paneId, { tabId: `${paneId}-t2` })),
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  const ws = rowWorkspace(
    'w1',
    kinds.map((kind, i) => ({ id: `p${i}`, kind, label: `pane ${i}` })),
    { name: 'One' },
  );
  ctx.workspaces.applySnapshot({ workspaces: [ws], activeId: 'w1' });
  return { ctx, backend };
}

describe('terminal commands', () => {
  it('offers the palette commands with their shortcuts', async () => {
    const { ctx } = context(['terminal']);
    await ctx.terminals.open('p0', 80, 24);
    const cmds = withShortcuts(terminalCommands(ctx, null));
    expect(cmds.map((c) => [c.title, c.shortcut])).toEqual([
      ['Restart Terminal', 'Ctrl+R'],
      ['Toggle Broadcast for Pane', 'Ctrl+B'],
      ['New Terminal Tab', undefined],
      ['Connect Pane to SSH Server…', undefined],
    ]);
  });

  it('offers nothing when the workspace shows no terminal', () => {
    const { ctx } = context(['browser']);
    expect(terminalCommands(ctx, null)).toEqual([]);
  });

  it('acts on the focused pane, else the last focused, else the first terminal pane', () => {
    const { ctx } = context(['browser', 'terminal', 'terminal']);
    expect(targetPaneId(ctx, null)).toBe('p1');
    ctx.terminals.lastPaneId = 'p2';
    expect(targetPaneId(ctx, null)).toBe('p2');
    expect(targetPaneId(ctx, 'p1')).toBe('p1');
    ctx.terminals.lastPaneId = 'gone';
    expect(targetPaneId(ctx, 'p0')).toBe('p1'); // a browser pane is no target
  });

  it('restarts the target pane’s shown tab and toggles its broadcast flag', async () => {
    const { ctx, backend } = context(['terminal', 'terminal']);
    await ctx.terminals.open('p1', 80, 24);
    const cmds = terminalCommands(ctx, 'p1');
    await cmds.find((c) => c.id === COMMAND.restartTerminal)!.run();
    expect(backend.terminalRestart).toHaveBeenCalledWith('p1', 'p1-t1');
    await cmds.find((c) => c.id === COMMAND.toggleBroadcast)!.run();
    expect(backend.terminalSetBroadcast).toHaveBeenCalledWith('p1', true);
    await cmds.find((c) => c.id === COMMAND.newTerminalTab)!.run();
    expect(backend.terminalNewTab).toHaveBeenCalledWith('p1', 80, 24);
    expect(ctx.terminals.activeTab('p1')?.tabId).toBe('p1-t2');
  });

  it("asks the target pane's SSH menu to open, and opens an SSH tab sized like the pane", async () => {
    const { ctx, backend } = context(['terminal', 'terminal']);
    (backend as unknown as { terminalOpenSSH: unknown }).terminalOpenSSH = vi.fn(async () => tab('p1', { tabId: 'p1-ssh', remote: 'ci@build:2222' }));
    await ctx.terminals.open('p1', 80, 24);
    await terminalCommands(ctx, 'p1').find((c) => c.id === COMMAND.connectSSH)!.run();
    expect(ctx.ui.sshMenuPaneId).toBe('p1');
    await newSSHTab(ctx, 'p1', 'ssh-1');
    expect(backend.terminalOpenSSH).toHaveBeenCalledWith('p1', 'ssh-1', 80, 24);
    expect(ctx.terminals.activeTab('p1')).toMatchObject({ tabId: 'p1-ssh', remote: 'ci@build:2222' });
  });

  it('holds terminalExited only for a focused terminal whose shown shell has exited', async () => {
    const { ctx } = context(['terminal']);
    await ctx.terminals.open('p0', 80, 24);
    expect(keyConditionHolds(ctx, 'terminalFocused', 'p0')).toBe(true);
    expect(keyConditionHolds(ctx, 'terminalFocused', null)).toBe(false);
    expect(keyConditionHolds(ctx, 'terminalExited', 'p0')).toBe(false);
    ctx.terminals.handleEvent({
      topic: 'terminal',
      type: 'tab',
      data: { kind: 'exited', tab: tab('p0', { running: false, exitCode: 0 }) },
    });
    expect(keyConditionHolds(ctx, 'terminalExited', 'p0')).toBe(true);
    expect(keyConditionHolds(ctx, 'terminalExited', null)).toBe(false);
  });
});
