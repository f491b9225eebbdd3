import type { InboxItem } from '../../lib/api';
import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND } from '../../lib/state/keymap';
import { focusPaneWhenReady } from '../workspace/paneDom';

/** How long a jump waits for its pane to take the keyboard (a workspace just switched to draws first). */
const JUMP_FOCUS_WAIT_MS = 5000;

let stopFocus: () => void = () => {};

/**
 * Goes to an item: its workspace, its pane with the keyboard in it, and what the item asks for
 * (an approval's modal, the chat for a chat's approval, the Fleet Dashboard for a task without
 * a pane).
 */
export async function jumpTo(ctx: AppContext, item: InboxItem): Promise<void> {
  const from = ctx.inbox.last;
  // Going on from an approval puts it off, as its "Later" does: it stays in the inbox, and its
  // modal no longer covers the next item.
  if (from?.kind === 'approval' && from.approvalId && from.id !== item.id && from.goalId) ctx.goals.defer(from.approvalId);
  ctx.inbox.last = item;
  ctx.inbox.open = false;
  ctx.ui.paletteOpen = false;
  const wsId = item.workspaceId;
  // Work to land opens its fleet over the panes; everything else with a pane is met there.
  const paneId = item.kind === 'review' ? '' : item.paneId;
  if (paneId) {
    // The dashboards would cover the pane.
    ctx.ui.goalsOpen = false;
    ctx.fleets.open = false;
  }
  if (wsId && paneId) ctx.panes.focus(wsId, paneId); // the grid starts on it when shown
  if (wsId && ctx.workspaces.active?.id !== wsId && ctx.workspaces.byId(wsId)) await ctx.workspaces.activate(wsId);
  if (paneId) {
    // The keyboard leaves wherever it was (the panel, a button) for the pane.
    if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
    stopFocus();
    stopFocus = focusPaneWhenReady(paneId, JUMP_FOCUS_WAIT_MS);
  }
  switch (item.kind) {
    case 'approval':
      if (item.goalId) ctx.goals.recall(item.goalId); // asked again, if it was put off
      else ctx.ui.chatOpen = true;
      break;
    case 'task_failed':
    case 'task_blocked':
      if (!item.paneId) openFleet(ctx, item.fleetId);
      break;
    case 'review':
      // Work to review and land is read in its fleet, where its Changes and Land are.
      openFleet(ctx, item.fleetId);
      break;
  }
}

function openFleet(ctx: AppContext, fleetId: string): void {
  ctx.ui.goalsOpen = false;
  ctx.fleets.selectedId = fleetId;
  ctx.fleets.open = true;
}

/** Ctrl+Shift+L: the next item of the inbox. */
export function jumpNext(ctx: AppContext): void {
  const item = ctx.inbox.next();
  if (item) void jumpTo(ctx, item);
}

/** Opens or closes the Inbox panel. */
export function toggleInbox(ctx: AppContext): void {
  ctx.ui.paletteOpen = false;
  ctx.inbox.open = !ctx.inbox.open;
}

export function inboxCommands(ctx: AppContext): Command[] {
  return [
    { id: COMMAND.inboxNext, title: 'Inbox: Go to the Next Item', run: () => jumpNext(ctx) },
    { id: COMMAND.toggleInbox, title: 'Toggle Inbox', run: () => toggleInbox(ctx) },
  ];
}
