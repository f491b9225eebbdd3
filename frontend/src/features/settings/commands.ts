import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND } from '../../lib/state/keymap';

/** Opens the Settings panel; shared by the palette, the Ctrl+, shortcut and the status bar gear. */
export function openSettings(ctx: AppContext): void {
  ctx.ui.paletteOpen = false;
  ctx.ui.settingsOpen = true;
}

export function settingsCommands(ctx: AppContext): Command[] {
  return [{ id: COMMAND.openSettings, title: 'Open Settings', run: () => openSettings(ctx) }];
}
