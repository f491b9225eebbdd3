import type { Pane } from '../../lib/api';
import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND, startAsCommand } from '../../lib/state/keymap';
import type { Direction } from '../../lib/state/paneNav';
import { otherKind } from '../../lib/state/panes.svelte';
import { writeClipboard } from '../terminal/clipboard';
import { domFocusedPaneId, focusPaneElement } from './paneDom';

/**
 * The pane the pane commands act on: the one with the keyboard, else the workspace's focused
 * pane (the backend's, which the agent may have set), else the one a terminal had last, else the
 * first. Only panes of the active workspace qualify.
 */
export function targetPane(ctx: AppContext, domFocused: string | null = domFocusedPaneId()): Pane | undefined {
  const ws = ctx.workspaces.active;
  if (!ws) return undefined;
  const find = (id: string | null | undefined) => (id ? ws.panes.find((p) => p.id === id) : undefined);
  return (
    find(domFocused) ??
    find(ctx.panes.focusedPaneId(ws)) ??
    find(ctx.panes.maximizedPaneId(ws)) ??
    find(ctx.terminals.lastPaneId) ??
    ws.panes.slice().sort((a, b) => a.row - b.row || a.col - b.col)[0]
  );
}

/** Alt+Arrow: focus (and the keyboard) moves to the neighbouring pane. */
export function movePaneFocus(ctx: AppContext, dir: Direction): void {
  const ws = ctx.workspaces.active;
  if (!ws) return;
  // The keyboard's pane counts as the focused one even before the backend heard of it.
  const here = domFocusedPaneId();
  if (here && ctx.panes.focusedPaneId(ws) !== here && !ctx.panes.maximizedPaneId(ws)) ctx.panes.focus(ws.id, here);
  const next = ctx.panes.move(ws.id, dir);
  if (next) focusPaneElement(next.id);
}

/** The pane commands for the palette and the keymap; none without a workspace. */
export function paneCommands(ctx: AppContext, domFocused: string | null = domFocusedPaneId()): Command[] {
  const ws = ctx.workspaces.active;
  const pane = targetPane(ctx, domFocused);
  if (!ws || !pane) return [];
  const { panes } = ctx;
  const maximized = panes.maximizedPaneId(ws) === pane.id;
  const to = otherKind(pane.kind);
  const commands: Command[] = [
    {
      id: COMMAND.toggleMaximizePane,
      title: maximized ? 'Restore Pane Grid' : 'Maximize Pane',
      run: () => panes.toggleMaximize(ws.id, pane.id).then(() => undefined),
    },
    { id: COMMAND.focusPaneLeft, title: 'Focus Pane Left', run: () => movePaneFocus(ctx, 'left') },
    { id: COMMAND.focusPaneRight, title: 'Focus Pane Right', run: () => movePaneFocus(ctx, 'right') },
    { id: COMMAND.focusPaneUp, title: 'Focus Pane Above', run: () => movePaneFocus(ctx, 'up') },
    { id: COMMAND.focusPaneDown, title: 'Focus Pane Below', run: () => movePaneFocus(ctx, 'down') },
    {
      id: COMMAND.convertPane,
      title: to === 'browser' ? 'Convert Pane to Browser' : 'Convert Pane to Terminal',
      run: () => panes.convert(ws.id, pane.id, { kind: to }).then(() => undefined),
    },
    { id: COMMAND.copyPaneId, title: `Copy Pane ID (${pane.id})`, run: () => writeClipboard(pane.id) },
  ];
  for (const t of panes.knownTemplates()) {
    const missing = t.installed ? '' : ' (not installed)';
    commands.push({
      id: startAsCommand(t.id),
      title: t.id === 'custom' ? 'Start Pane as Custom Command…' : `Start Pane as ${t.name}${missing}`,
      run: () => {
        // The custom command is typed in the pane's menu.
        if (t.id === 'custom') panes.menuRequest = { paneId: pane.id, view: 'start-as' };
        else return panes.startAs(ws.id, pane, t.id).then(() => undefined);
      },
    });
  }
  return commands;
}
