import { errorMessage, type Backend, type Extensions } from '../api';

/** How often Settings → Plugins and → MCP re-read while open: the files change on disk, and
 * servers start, fail and crash with no event of their own. */
export const EXTENSIONS_POLL_MS = 3000;

/**
 * The config dir's plugins and MCP servers as the backend last reported them. Errors are kept
 * (loadError) for the Settings pages to show where they belong, not on the banner.
 */
export class ExtensionsStore {
  data = $state.raw<Extensions | null>(null);
  loadError = $state('');
  /** True while "Start servers" runs. */
  starting = $state(false);

  constructor(private readonly backend: Backend) {}

  /** Whether this door can open a folder in the file manager (the desktop window can). */
  get canOpenFolder(): boolean {
    return typeof this.backend.extensions?.openFolder === 'function';
  }

  async openFolder(which: 'plugins' | 'mcp') {
    try {
      await this.backend.extensions.openFolder?.(which);
    } catch (err) {
      this.loadError = errorMessage(err);
    }
  }

  async load() {
    try {
      this.data = await this.backend.extensions.get();
      this.loadError = '';
    } catch (err) {
      this.loadError = errorMessage(err);
    }
  }

  async startMcp() {
    this.starting = true;
    try {
      this.data = await this.backend.extensions.startMcp();
      this.loadError = '';
    } catch (err) {
      this.loadError = errorMessage(err);
    } finally {
      this.starting = false;
    }
  }

  /** Loads now and every EXTENSIONS_POLL_MS until the returned stop function is called. */
  follow(): () => void {
    void this.load();
    const timer = setInterval(() => void this.load(), EXTENSIONS_POLL_MS);
    return () => clearInterval(timer);
  }
}
