/** Small pieces of UI state that several features reach for. */
export class UiState {
  paletteOpen = $state(false);
  settingsOpen = $state(false);
  /** The workspace whose tab shows the inline rename input, if any. */
  renamingId = $state<string | null>(null);
  /** Opens the import file picker; set by the component that owns the file input. */
  openImportPicker: () => void = () => {};
}
