import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND } from '../../lib/state/keymap';

/** Opens or closes the Goal Dashboard (Ctrl+Shift+G, the status bar button, the palette). */
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

/** Opens the New Goal dialog, for a pane if given. */
export function newGoal(ctx: AppContext, paneId = ''): void {
  ctx.ui.paletteOpen = false;
  ctx.ui.goalsOpen = true;
  ctx.ui.newGoalPaneId = paneId;
  ctx.ui.newGoalOpen = true;
}

export function goalCommands(ctx: AppContext): Command[] {
  return [
    { id: COMMAND.toggleGoals, title: 'Toggle Goal Dashboard', run: () => toggleGoals(ctx) },
    { id: COMMAND.newGoal, title: 'New Goal…', run: () => newGoal(ctx) },
  ];
}
