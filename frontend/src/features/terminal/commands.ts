import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND, type KeyCondition } from '../../lib/state/keymap';
import { focusInPaneArea } from '../workspace/paneDom';
import { focusedTerminalPaneId, terminalView } from './registry';

/** A new tab's size before its view has fitted it (the view resizes it on attach). */
const DEFAULT_SIZE = { cols: 80, rows: 24 };

/**
 * The terminal pane commands act on: the one with the keyboard, else the workspace's focused
 * pane, else the one focused last, else the first terminal pane of the active workspace. Only
 * panes of the active workspace qualify.
 */
export function targetPaneId(ctx: AppContext, focused: string | null = focusedTerminalPaneId()): string | null {
  const ws = ctx.workspaces.active;
  if (!ws) return null;
  const ids = ws.panes.filter((p) => p.kind === 'terminal').map((p) => p.id);
  if (focused && ids.includes(focused)) return focused;
  const wsFocused = ctx.panes.focusedPaneId(ws);
  if (wsFocused && ids.includes(wsFocused)) return wsFocused;
  const last = ctx.terminals.lastPaneId;
  if (last && ids.includes(last)) return last;
  return ids[0] ?? null;
}

/** Whether a keymap condition holds now (focus is read from the page). */
export function keyConditionHolds(
  ctx: AppContext,
  cond: KeyCondition,
  focused: string | null = focusedTerminalPaneId(),
): boolean {
  if (cond === 'paneArea') return focusInPaneArea();
  if (!focused) return false;
  switch (cond) {
    case 'terminalFocused':
      return true;
    case 'terminalExited': {
      const tab = ctx.terminals.activeTab(focused);
      return !!tab && !tab.running;
    }
  }
}

/** Opens a tab sized like the pane's view, and gives it the keyboard. */
export async function newTerminalTab(ctx: AppContext, paneId: string): Promise<void> {
  const view = terminalView(paneId);
  const size = view?.size() ?? DEFAULT_SIZE;
  const tab = await ctx.terminals.newTab(paneId, size.cols, size.rows);
  if (tab) view?.focus();
}

/** Opens a tab connected to a saved SSH server, sized like the pane's view, with the keyboard. */
export async function newSSHTab(ctx: AppContext, paneId: string, serverId: string): Promise<void> {
  const view = terminalView(paneId);
  const size = view?.size() ?? DEFAULT_SIZE;
  const tab = await ctx.terminals.openSSH(paneId, serverId, size.cols, size.rows);
  if (tab) view?.focus();
}

/** The terminal commands for the palette and the keymap; none when no terminal pane is shown. */
export function terminalCommands(ctx: AppContext, focused: string | null = focusedTerminalPaneId()): Command[] {
  const paneId = targetPaneId(ctx, focused);
  if (!paneId) return [];
  const { terminals } = ctx;
  const commands: Command[] = [];
  const tab = terminals.activeTab(paneId);
  if (tab) {
    commands.push({
      id: COMMAND.restartTerminal,
      title: 'Restart Terminal',
      run: async () => {
        await terminals.restart(paneId, tab.tabId);
        terminalView(paneId)?.focus();
      },
    });
  }
  commands.push(
    {
      id: COMMAND.toggleBroadcast,
      title: 'Toggle Broadcast for Pane',
      run: () => terminals.toggleBroadcast(paneId),
    },
    { id: COMMAND.newTerminalTab, title: 'New Terminal Tab', run: () => newTerminalTab(ctx, paneId) },
    {
      id: COMMAND.connectSSH,
      title: 'Connect Pane to SSH Server…',
      // The pane's own "New SSH tab" menu lists the servers.
      run: () => {
        ctx.ui.sshMenuPaneId = paneId;
      },
    },
  );
  return commands;
}
