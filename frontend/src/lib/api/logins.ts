// Saved logins (Settings → Logins): per site a user name and a password kept in the backend's
// vault. Lists never carry a password; reveal is its own call, which under `serve` takes the
// server's login password again. LoginsCalls are their calls of the table (backend/api
// logins.go) over either transport; the Backend exposes them as `backend.logins`.
import type { Call } from './table';
import type * as logins from './gen/logins';

/** A saved login: origin is scheme://host[:port]; never its password. */
export type SavedLogin = logins.Login;

/** password absent keeps the saved one (edit only); a new login needs one. */
export type SavedLoginInput = logins.Input;

export interface LoginsApi {
  /** True under `serve`: reveal needs the server's login password. */
  readonly revealNeedsPassword: boolean;
  list(): Promise<SavedLogin[]>;
  /** id '' adds. Bad input rejects with a BackendError whose `field` names the input. */
  save(id: string, input: SavedLoginInput): Promise<SavedLogin>;
  remove(id: string): Promise<void>;
  /**
   * The saved password, after the UI asked the person to confirm. A wrong server password
   * rejects naming `password`; too many lock reveals out, with `retryAfter` seconds.
   */
  reveal(id: string, serverPassword?: string): Promise<string>;
}

export class LoginsCalls implements LoginsApi {
  /** revealNeedsPassword: the door asks for the server's login password again (serve). */
  constructor(
    private readonly call: Call,
    readonly revealNeedsPassword: boolean,
  ) {}
  async list() {
    return (await this.call('ListLogins', {})).logins;
  }
  save(id: string, input: SavedLoginInput) {
    return this.call('SaveLogin', { id, input });
  }
  remove(id: string) {
    return this.call('DeleteLogin', { id });
  }
  async reveal(id: string, serverPassword?: string) {
    const args = serverPassword === undefined ? { id } : { id, password: serverPassword };
    return (await this.call('RevealLogin', args)).password;
  }
}
