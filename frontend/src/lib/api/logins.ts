// Saved logins (Settings → Logins): per site a user name and a password kept in the backend's
// vault. Lists never carry a password; reveal is its own call, which under `serve` takes the
// server's login password again. The Backend exposes one implementation as `backend.logins`.
import { callWails } from './errors';
import type { JsonRequest } from './goals';

export interface SavedLogin {
  id: string;
  /** scheme://host[:port] */
  origin: string;
  username: string;
  passwordSet: boolean;
  createdAt: string;
  updatedAt: string;
}

/** password absent keeps the saved one (edit only); a new login needs one. */
export interface SavedLoginInput {
  origin: string;
  username: string;
  password?: string;
}

export const LOGIN_ERROR_FIELDS = ['origin', 'username', 'password'] as const;

export interface LoginsApi {
  /** True under `serve`: reveal needs the server's login password. */
  readonly revealNeedsPassword: boolean;
  list(): Promise<SavedLogin[]>;
  /** id '' adds. Bad input rejects with a BackendError whose `field` names the input. */
  save(id: string, input: SavedLoginInput): Promise<SavedLogin>;
  remove(id: string): Promise<void>;
  /** The saved password, after the UI asked the person to confirm. */
  reveal(id: string, serverPassword?: string): Promise<string>;
}

function arr<T>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

const enc = encodeURIComponent;

export class HttpLogins implements LoginsApi {
  readonly revealNeedsPassword = true;
  constructor(private readonly json: JsonRequest) {}
  async list() {
    return arr<SavedLogin>((await this.json<{ logins: unknown }>('GET', '/api/logins'))?.logins);
  }
  save(id: string, input: SavedLoginInput) {
    return id === ''
      ? this.json<SavedLogin>('POST', '/api/logins', input)
      : this.json<SavedLogin>('PUT', `/api/logins/${enc(id)}`, input);
  }
  async remove(id: string) {
    await this.json('DELETE', `/api/logins/${enc(id)}`);
  }
  async reveal(id: string, serverPassword = '') {
    return (await this.json<{ password: string }>('POST', `/api/logins/${enc(id)}/reveal`, { password: serverPassword }))?.password ?? '';
  }
}

/** The bound Go methods of app_logins.go. */
export interface WailsLoginMethods {
  ListLogins(): Promise<SavedLogin[] | null>;
  SaveLogin(id: string, input: SavedLoginInput): Promise<SavedLogin>;
  DeleteLogin(id: string): Promise<void>;
  RevealLogin(id: string): Promise<string>;
}

export class WailsLogins implements LoginsApi {
  readonly revealNeedsPassword = false;
  constructor(private readonly app: WailsLoginMethods) {}
  private call<T>(fn: () => Promise<T>) {
    return callWails(fn, LOGIN_ERROR_FIELDS);
  }
  async list() {
    return arr<SavedLogin>(await this.call(() => this.app.ListLogins()));
  }
  save(id: string, input: SavedLoginInput) {
    return this.call(() => this.app.SaveLogin(id, { ...input }));
  }
  remove(id: string) {
    return this.call(() => this.app.DeleteLogin(id));
  }
  reveal(id: string) {
    return this.call(() => this.app.RevealLogin(id));
  }
}
