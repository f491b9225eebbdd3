import type { GoalDraft } from '../../features/goals/newGoalForm';

/** The sections of the Settings panel. */
export type SettingsTab = 'providers' | 'prices' | 'terminal' | 'ssh' | 'logins' | 'personas' | 'skills' | 'templates' | 'plugins' | 'mcp';

/** Small pieces of UI state that several features reach for. */
export class UiState {
  paletteOpen = $state(false);
  settingsOpen = $state(false);
  /** Set by an "Add provider" button: Settings → Providers opens its add form. */
  addProviderRequested = $state(false);
  /** The section Settings shows. */
  settingsTab = $state<SettingsTab>('providers');
  /** The terminal pane whose "New SSH tab" menu should open (the palette asks for it). */
  sshMenuPaneId = $state<string | null>(null);
  /** The workspace whose tab shows the inline rename input, if any. */
  renamingId = $state<string | null>(null);
  /** The Goal Dashboard (Ctrl+Shift+D) covers the workspace while open… */
  goalsOpen = $state(false);
  /** …or sits beside the panes, so the terminal a goal types in stays in view (remembered). */
  goalsDocked = $state(readDocked());
  /** The goal the dashboard shows in detail; a pane's goal badge sets it. */
  selectedGoalId = $state<string | null>(null);
  /** The New Goal dialog (Ctrl+Shift+G), and the pane it starts with ('' = let the user pick). */
  newGoalOpen = $state(false);
  newGoalPaneId = $state('');
  /** What the New Goal dialog held when it went away unfinished (the dashboard closed over it). */
  newGoalDraft: GoalDraft | null = null;
  /** The chat panel (Ctrl+Shift+A) beside the panes. */
  chatOpen = $state(false);
  /** Opens the import file picker; set by the component that owns the file input. */
  openImportPicker: () => void = () => {};
}

const DOCKED_KEY = 'clusterspace.goalsDocked';

function readDocked(): boolean {
  try {
    return globalThis.localStorage?.getItem(DOCKED_KEY) === 'true';
  } catch {
    return false; // Storage may be off (private mode): the dashboard opens full size.
  }
}

/** Remembers where the Goal Dashboard sits. */
export function saveDocked(docked: boolean): void {
  try {
    globalThis.localStorage?.setItem(DOCKED_KEY, String(docked));
  } catch {
    // Best effort: it only decides where the dashboard opens next time.
  }
}
