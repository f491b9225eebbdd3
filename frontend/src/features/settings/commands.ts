import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND } from '../../lib/state/keymap';
import type { SettingsTab } from '../../lib/state/ui.svelte';

/**
 * Opens the Settings panel at a section (Providers unless told); shared by the palette, the
 * Ctrl+, shortcut, the status bar gear and the terminal's SSH menu.
 */
export function openSettings(ctx: AppContext, tab: SettingsTab = 'providers'): void {
  ctx.ui.paletteOpen = false;
  ctx.ui.settingsTab = tab;
  ctx.ui.settingsOpen = true;
}

/** Opens Settings → Providers on the add form (or just the list, to pick a default). */
export function openAddProvider(ctx: AppContext, addForm = true): void {
  openSettings(ctx, 'providers');
  ctx.ui.addProviderRequested = addForm;
}

export function settingsCommands(ctx: AppContext): Command[] {
  return [{ id: COMMAND.openSettings, title: 'Open Settings', run: () => openSettings(ctx) }];
}
