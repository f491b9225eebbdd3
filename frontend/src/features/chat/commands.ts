import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND } from '../../lib/state/keymap';

/** Opens or closes the chat panel (Ctrl+Shift+A, the palette). */
export function toggleChat(ctx: AppContext): void {
  ctx.ui.paletteOpen = false;
  ctx.ui.chatOpen = !ctx.ui.chatOpen;
}

export function chatCommands(ctx: AppContext): Command[] {
  return [{ id: COMMAND.toggleChat, title: 'Toggle Chat Panel', run: () => toggleChat(ctx) }];
}
