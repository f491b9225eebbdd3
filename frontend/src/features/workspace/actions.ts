// Workspace actions that need the UI as well as the backend: a confirmation, a file picker.
import type { AppContext } from '../../lib/state/context';

/** Asks first, because closing deletes the workspace's layout for good. */
export async function closeWorkspace(ctx: AppContext, id: string | undefined): Promise<void> {
  const ws = id ? ctx.workspaces.byId(id) : undefined;
  if (!ws || ctx.workspaces.workspaces.length < 2) return;
  const ok = await ctx.dialogs.confirm({
    title: 'Close workspace',
    message: `Close "${ws.name}"? Its layout and panes will be deleted.`,
    confirmLabel: 'Close',
  });
  if (ok) await ctx.workspaces.remove(ws.id);
}

export async function importFile(ctx: AppContext, file: File): Promise<void> {
  let text: string;
  try {
    text = await file.text();
  } catch (err) {
    ctx.notices.report(new Error(`Could not read "${file.name}": ${String(err)}`));
    return;
  }
  await ctx.workspaces.importWorkspace(text);
}

export function startRename(ctx: AppContext, id: string | undefined): void {
  if (id) ctx.ui.renamingId = id;
}
