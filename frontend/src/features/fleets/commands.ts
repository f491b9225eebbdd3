import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';

/** Palette command ids of the fleet features. */
export const FLEET_COMMAND = {
  toggle: 'fleets.toggle',
  compose: 'fleets.compose',
} as const;

/** Opens or closes the Fleet Dashboard. */
export function toggleFleets(ctx: AppContext): void {
  ctx.ui.paletteOpen = false;
  ctx.fleets.open = !ctx.fleets.open;
}

/** Opens the Fleet Composer (over the dashboard), empty or with a fleet's YAML. */
export function composeFleet(ctx: AppContext, yaml: string | null = null): void {
  ctx.ui.paletteOpen = false;
  ctx.fleets.open = true;
  ctx.fleets.composerSeed = yaml;
  ctx.fleets.composerOpen = true;
}

export function fleetCommands(ctx: AppContext): Command[] {
  return [
    { id: FLEET_COMMAND.toggle, title: 'Toggle Fleet Dashboard', run: () => toggleFleets(ctx) },
    { id: FLEET_COMMAND.compose, title: 'New Fleet… (Fleet Composer)', run: () => composeFleet(ctx) },
  ];
}
