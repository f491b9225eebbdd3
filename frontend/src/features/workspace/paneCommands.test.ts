import { describe, expect, it, vi } from 'vitest';
import type { Backend, Workspace } from '../../lib/api';
import { rowWorkspace, type PaneSpec } from '../../lib/api/workspace.fixture';
import { withShortcuts } from '../../lib/state/commands';
import { createAppContext } from '../../lib/state/context';
import { COMMAND, startAsCommand } from '../../lib/state/keymap';
import { paneCommands, targetPane } from './paneCommands';

function ws(over: Partial<Workspace> = {}): Workspace {
  const panes: PaneSpec[] = [
    { id: 'pane-a', kind: 'terminal', label: 'A' },
    { id: 'pane-b', kind: 'browser', label: 'B' },
  ];
  return rowWorkspace('w1', panes, { name: 'W', focusedPaneId: 'pane-b', createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:01Z', ...over });
}

async function context(start: Workspace) {
  const backend = {
    kind: 'web',
    launchTemplates: vi.fn(async () => [
      { id: 'shell', name: 'Shell', command: '', installed: true },
      { id: 'claude', name: 'Claude Code', command: 'claude', installed: false, install: 'npm install -g @anthropic-ai/claude-code' },
      { id: 'custom', name: 'Custom command', command: '', installed: true },
    ]),
    convertPane: vi.fn(async () => start),
    toggleMaximizePane: vi.fn(async () => ({ ...start, maximizedPaneId: 'pane-b' })),
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.workspaces.applySnapshot({ workspaces: [start], activeId: 'w1' });
  await ctx.panes.loadTemplates();
  return { ctx, backend };
}

describe('paneCommands', () => {
  it('act on the workspace focused pane when the keyboard is elsewhere (the palette has it)', async () => {
    const { ctx, backend } = await context(ws());
    expect(targetPane(ctx, null)?.id).toBe('pane-b');
    expect(targetPane(ctx, 'pane-a')?.id).toBe('pane-a');
    const cmds = withShortcuts(paneCommands(ctx, null));
    const byId = (id: string) => cmds.find((c) => c.id === id)!;
    expect(byId(COMMAND.toggleMaximizePane)).toMatchObject({ title: 'Maximize Pane', shortcut: 'Ctrl+Enter' });
    expect(byId(COMMAND.convertPane).title).toBe('Convert Pane to Terminal');
    expect(byId(COMMAND.copyPaneId).title).toBe('Copy Pane ID (pane-b)');
    expect(byId(COMMAND.focusPaneLeft).shortcut).toBe('Alt+ArrowLeft');
    await byId(COMMAND.convertPane).run();
    expect(backend.convertPane).toHaveBeenCalledWith('w1', 'pane-b', { kind: 'terminal' });
  });

  it('offer "Start Pane as …" per template, saying which are not installed; custom opens the menu to type it', async () => {
    const { ctx } = await context(ws());
    const titles = paneCommands(ctx, 'pane-a')
      .filter((c) => c.id.startsWith('pane.startAs.'))
      .map((c) => c.title);
    expect(titles).toEqual(['Start Pane as Shell', 'Start Pane as Claude Code (not installed)', 'Start Pane as Custom Command…']);
    await paneCommands(ctx, 'pane-a').find((c) => c.id === startAsCommand('custom'))!.run();
    expect(ctx.panes.menuRequest).toEqual({ paneId: 'pane-a', view: 'start-as' });
  });

  it('say Restore when the target pane is the maximized one', async () => {
    const { ctx } = await context(ws({ maximizedPaneId: 'pane-b' }));
    expect(paneCommands(ctx, null).find((c) => c.id === COMMAND.toggleMaximizePane)!.title).toBe('Restore Pane Grid');
  });
});
