import type { Command } from '../../lib/state/commands';
import type { AppContext } from '../../lib/state/context';
import { COMMAND, switchCommand } from '../../lib/state/keymap';
import { closeWorkspace, startRename } from './actions';

/** Grid shapes offered in the palette, the ones people reach for most. */
export const PALETTE_GRIDS: ReadonlyArray<readonly [rows: number, cols: number]> = [
  [1, 1],
  [1, 2],
  [2, 2],
  [2, 3],
  [3, 2],
  [3, 3],
];

/**
 * The workspace commands available right now. The list depends on the workspaces (one
 * "Switch to" per workspace), so it is rebuilt from the current state each time it is needed.
 */
export function workspaceCommands(ctx: AppContext): Command[] {
  const { workspaces: store, ui } = ctx;
  const active = store.active;
  const commands: Command[] = [
    { id: COMMAND.newWorkspace, title: 'New Workspace', run: () => void store.create() },
  ];
  if (active && store.workspaces.length > 1) {
    commands.push({
      id: COMMAND.closeWorkspace,
      title: 'Close Workspace',
      run: () => closeWorkspace(ctx, active.id),
    });
  }
  if (active) {
    commands.push({
      id: COMMAND.renameWorkspace,
      title: 'Rename Workspace',
      run: () => startRename(ctx, active.id),
    });
  }
  if (store.workspaces.length > 1) {
    commands.push(
      { id: COMMAND.nextWorkspace, title: 'Next Workspace', run: () => store.cycle(1) },
      { id: COMMAND.previousWorkspace, title: 'Previous Workspace', run: () => store.cycle(-1) },
    );
  }
  store.workspaces.forEach((ws, i) => {
    commands.push({
      // The first nine are numbered so Ctrl+1…9 from the keymap apply to them.
      id: switchCommand(i + 1),
      title: `Switch to ${ws.name}`,
      run: () => store.activate(ws.id),
    });
  });
  if (active) {
    for (const [rows, cols] of PALETTE_GRIDS) {
      commands.push({
        id: `workspace.grid.${rows}x${cols}`,
        title: `Set Grid ${rows}×${cols}`,
        run: () => void store.setGrid(active.id, rows, cols),
      });
    }
    commands.push({
      id: COMMAND.exportWorkspace,
      title: 'Export Workspace',
      run: () => store.exportWorkspace(active.id),
    });
  }
  commands.push({
    id: COMMAND.importWorkspace,
    title: 'Import Workspace',
    run: () => ui.openImportPicker(),
  });
  return commands;
}
