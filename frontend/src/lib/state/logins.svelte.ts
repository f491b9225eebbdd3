import type { Backend, SavedLogin, SavedLoginInput } from '../api';
import { errorMessage } from '../api';

/**
 * Settings → Logins: the saved logins as the backend lists them (never a password). Actions
 * reject so the form can show each error at its field; a revealed password is handed to the
 * caller and never kept here.
 */
export class LoginStore {
  logins = $state.raw<SavedLogin[]>([]);
  loaded = $state(false);
  loadError = $state('');

  constructor(private readonly backend: Backend) {}

  /** Under `serve`, Reveal needs the server's login password typed again. */
  get revealNeedsPassword(): boolean {
    return this.backend.logins.revealNeedsPassword;
  }

  async load(): Promise<void> {
    try {
      this.logins = sortLogins(await this.backend.logins.list());
      this.loaded = true;
      this.loadError = '';
    } catch (err) {
      this.loadError = errorMessage(err);
    }
  }

  /** id '' adds. */
  async save(id: string, input: SavedLoginInput): Promise<SavedLogin> {
    const saved = await this.backend.logins.save(id, input);
    this.logins = sortLogins([...this.logins.filter((l) => l.id !== saved.id), saved]);
    return saved;
  }

  async remove(id: string): Promise<void> {
    await this.backend.logins.remove(id);
    this.logins = this.logins.filter((l) => l.id !== id);
  }

  reveal(id: string, serverPassword?: string): Promise<string> {
    return this.backend.logins.reveal(id, serverPassword);
  }
}

function sortLogins(list: SavedLogin[]): SavedLogin[] {
  return [...list].sort((a, b) => a.origin.localeCompare(b.origin));
}

/** What the login form sends: a password only when one was typed (an edit keeps the saved one). */
export function loginInput(origin: string, username: string, password: string): SavedLoginInput {
  const input: SavedLoginInput = { origin: origin.trim(), username: username.trim() };
  if (password !== '') input.password = password;
  return input;
}
