import { describe, expect, it } from 'vitest';
import type { Backend } from '../../lib/api';
import { withShortcuts } from '../../lib/state/commands';
import { createAppContext } from '../../lib/state/context';
import { settingsCommands } from './commands';

describe('settingsCommands', () => {
  it('offers "Open Settings" with Ctrl+, and opens the panel in place of the palette', () => {
    const ctx = createAppContext({ kind: 'web' } as Backend);
    ctx.ui.paletteOpen = true;
    const [open] = withShortcuts(settingsCommands(ctx));
    expect([open.title, open.shortcut]).toEqual(['Open Settings', 'Ctrl+,']);
    void open.run();
    expect(ctx.ui.settingsOpen).toBe(true);
    expect(ctx.ui.paletteOpen).toBe(false);
  });
});
