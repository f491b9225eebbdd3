import { describe, expect, it, vi } from 'vitest';
import type { Backend, Workspace } from '../../lib/api';
import { rowWorkspace } from '../../lib/api/workspace.fixture';
import { withShortcuts } from '../../lib/state/commands';
import { createAppContext } from '../../lib/state/context';
import { COMMAND, commandForKey } from '../../lib/state/keymap';
import { workspaceCommands } from './commands';

function ws(id: string, name: string, position: number): Workspace {
  return rowWorkspace(id, [], { name, position });
}

function context(names: string[]) {
  const backend = {
    kind: 'web',
    activateWorkspace: vi.fn(async () => {}),
    deleteWorkspace: vi.fn(async () => {}),
    listWorkspaces: vi.fn(async () => ({ workspaces: [], activeId: '' })),
    setGrid: vi.fn(async () => ws('w0', names[0], 0)),
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.workspaces.applySnapshot({ workspaces: names.map((n, i) => ws(`w${i}`, n, i)), activeId: 'w0' });
  return { ctx, backend };
}

describe('workspaceCommands', () => {
  it('offers one Switch per workspace, the first nine with their Ctrl+digit', () => {
    const names = Array.from({ length: 10 }, (_, i) => `WS${i + 1}`);
    const { ctx } = context(names);
    const switches = withShortcuts(workspaceCommands(ctx)).filter((c) => c.title.startsWith('Switch to'));
    expect(switches.map((c) => c.title)).toEqual(names.map((n) => `Switch to ${n}`));
    expect(switches[0].shortcut).toBe('Ctrl+1');
    expect(switches[8].shortcut).toBe('Ctrl+9');
    expect(switches[9].shortcut).toBeUndefined();
  });

  it('runs the command the keymap names for a key', async () => {
    const { ctx, backend } = context(['A', 'B', 'C']);
    const id = commandForKey({ key: '3', code: 'Digit3', ctrlKey: true, shiftKey: false, altKey: false, metaKey: false });
    await workspaceCommands(ctx).find((c) => c.id === id)!.run();
    expect(backend.activateWorkspace).toHaveBeenCalledWith('w2');
  });

  it('lists the grid shapes and the basic workspace commands', () => {
    const { ctx } = context(['A', 'B']);
    const titles = workspaceCommands(ctx).map((c) => c.title);
    for (const t of ['New Workspace', 'Close Workspace', 'Rename Workspace', 'Next Workspace', 'Previous Workspace', 'Export Workspace', 'Import Workspace']) {
      expect(titles).toContain(t);
    }
    expect(titles.filter((t) => t.startsWith('Set Grid'))).toEqual([
      'Set Grid 1×1',
      'Set Grid 1×2',
      'Set Grid 2×2',
      'Set Grid 2×3',
      'Set Grid 3×2',
      'Set Grid 3×3',
    ]);
  });

  it('does not offer closing, or cycling, the only workspace', () => {
    const { ctx } = context(['Only']);
    const ids = workspaceCommands(ctx).map((c) => c.id);
    expect(ids).not.toContain(COMMAND.closeWorkspace);
    expect(ids).not.toContain(COMMAND.nextWorkspace);
  });

  it('closes a workspace only after the user confirms', async () => {
    const { ctx, backend } = context(['A', 'B']);
    const close = workspaceCommands(ctx).find((c) => c.id === COMMAND.closeWorkspace)!;

    const cancelled = close.run();
    expect(ctx.dialogs.current?.message).toContain('"A"');
    ctx.dialogs.current!.answer(false);
    await cancelled;
    expect(backend.deleteWorkspace).not.toHaveBeenCalled();

    const confirmed = close.run();
    ctx.dialogs.current!.answer(true);
    await confirmed;
    expect(backend.deleteWorkspace).toHaveBeenCalledWith('w0', false);
  });
});
