// The app's colours: dark, light, or whichever the system asks for (prefers-color-scheme), the
// default. A view preference of this browser (or desktop window), kept in localStorage like the
// terminal font; app.css holds the two palettes and picks one by <html data-theme>.

export type ThemeChoice = 'system' | 'dark' | 'light';
export type Theme = 'dark' | 'light';

export const THEME_CHOICES: readonly ThemeChoice[] = ['system', 'dark', 'light'];

const STORAGE_KEY = 'clusterspace.theme';
const LIGHT_QUERY = '(prefers-color-scheme: light)';

type KeyValueStore = Pick<Storage, 'getItem' | 'setItem'>;
type MatchMedia = (query: string) => Pick<MediaQueryList, 'matches' | 'addEventListener' | 'removeEventListener'>;

export class ThemePrefs {
  choice = $state<ThemeChoice>('system');
  /** What the system asks for now. */
  systemLight = $state(false);
  /** The palette shown. */
  readonly theme: Theme = $derived(this.choice === 'system' ? (this.systemLight ? 'light' : 'dark') : this.choice);

  constructor(
    private readonly storage: KeyValueStore | null = browserLocalStorage(),
    private readonly matchMedia: MatchMedia | null = typeof window !== 'undefined' && window.matchMedia ? (q) => window.matchMedia(q) : null,
  ) {
    try {
      const saved = storage?.getItem(STORAGE_KEY);
      if (saved && (THEME_CHOICES as string[]).includes(saved)) this.choice = saved as ThemeChoice;
    } catch {
      // Unreadable storage is the same as no choice: follow the system.
    }
  }

  set(choice: ThemeChoice): void {
    this.choice = choice;
    try {
      this.storage?.setItem(STORAGE_KEY, choice);
    } catch {
      // Best effort: without storage the choice just does not outlive the page.
    }
  }

  /**
   * Follows the system setting and shows the chosen palette on `root` until the returned stop
   * function is called.
   */
  apply(root: HTMLElement): () => void {
    const mq = this.matchMedia?.(LIGHT_QUERY) ?? null;
    const onChange = () => (this.systemLight = mq?.matches ?? false);
    onChange();
    mq?.addEventListener('change', onChange);
    const stopEffect = $effect.root(() => {
      $effect(() => {
        root.dataset.theme = this.theme;
      });
    });
    return () => {
      mq?.removeEventListener('change', onChange);
      stopEffect();
    };
  }
}

function browserLocalStorage(): KeyValueStore | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null;
  }
}
