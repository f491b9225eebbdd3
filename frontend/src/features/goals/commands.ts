import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND } from '../../lib/state/keymap';
import { domFocusedPaneId } from '../workspace/paneDom';

/** Opens or closes the Goal Dashboard (Ctrl+Shift+D, the status bar button, the palette). */
export function toggleGoals(ctx: AppContext): void {
  ctx.ui.paletteOpen = false;
  ctx.ui.goalsOpen = !ctx.ui.goalsOpen;
  if (ctx.ui.goalsOpen) ctx.fleets.open = false; // it would cover the goals
}

/** Opens the dashboard on one goal (a pane's goal badge). */
export function showGoal(ctx: AppContext, goalId: string): void {
  // A request of this goal that the user put off is asked again: they came to see the goal.
  ctx.goals.recall(goalId);
  ctx.ui.selectedGoalId = goalId;
  ctx.ui.goalsOpen = true;
}

/**
 * Opens the New Goal dialog, for a pane if given: over the Goal Dashboard when it is open (its
 * "+ New Goal"), else on its own over the workspace, so the person stays where they were.
 */
export function newGoal(ctx: AppContext, paneId = ''): void {
  ctx.ui.paletteOpen = false;
  ctx.ui.newGoalPaneId = paneId;
  ctx.ui.newGoalOpen = true;
}

/**
 * The pane a new goal starts in: the one holding the keyboard, else the workspace's focused
 * pane (the palette has the keyboard while it is open), else none ('': the person picks).
 */
export function paneForNewGoal(ctx: AppContext): string {
  const ws = ctx.workspaces.active;
  if (!ws) return '';
  const inDom = domFocusedPaneId();
  if (inDom && ws.panes.some((p) => p.id === inDom)) return inDom;
  return ctx.panes.focusedPaneId(ws);
}

/** Ctrl+Shift+G and the palette's "New Goal…": a goal for the focused pane. */
export function newGoalHere(ctx: AppContext): void {
  newGoal(ctx, paneForNewGoal(ctx));
}

export function goalCommands(ctx: AppContext): Command[] {
  return [
    { id: COMMAND.toggleGoals, title: 'Toggle Goal Dashboard', run: () => toggleGoals(ctx) },
    { id: COMMAND.newGoal, title: 'New Goal…', run: () => newGoalHere(ctx) },
  ];
}
