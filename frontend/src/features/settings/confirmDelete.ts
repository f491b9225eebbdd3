import { errorMessage } from '../../lib/api';
import type { Dialogs } from '../../lib/state/dialogs.svelte';

/**
 * A list's Delete: asks first (the dialog names what goes with it), then deletes. Resolves to
 * the failure to show above the list, or '' when it went through or the person said no.
 */
export async function confirmDelete(dialogs: Dialogs, title: string, message: string, remove: () => Promise<unknown>): Promise<string> {
  if (!(await dialogs.confirm({ title, message, confirmLabel: 'Delete' }))) return '';
  try {
    await remove();
    return '';
  } catch (err) {
    return errorMessage(err);
  }
}
