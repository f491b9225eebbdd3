import type { Backend, ConnectionState } from '../api';

/** Who is signed in, how the live connection is doing, and which backend version serves us. */
export class Session {
  readonly kind: Backend['kind'];
  signedIn = $state(true);
  connection = $state<ConnectionState>('connected');
  version = $state('');

  constructor(private readonly backend: Backend) {
    this.kind = backend.kind;
    this.signedIn = backend.auth ? backend.auth.signedIn() : true;
  }

  /** Starts following the backend's auth and connection changes; returns the stop function. */
  start(): () => void {
    const stops: Array<() => void> = [];
    if (this.backend.auth) {
      stops.push(this.backend.auth.onChange((s) => (this.signedIn = s)));
    }
    if (this.backend.onConnectionChange) {
      stops.push(this.backend.onConnectionChange((s) => (this.connection = s)));
    }
    return () => stops.forEach((stop) => stop());
  }

  async login(password: string, unlock?: string): Promise<void> {
    if (!this.backend.auth) return;
    await this.backend.auth.login(password, unlock);
    this.signedIn = this.backend.auth.signedIn();
  }

  async loadVersion(report: (err: unknown) => void): Promise<void> {
    try {
      this.version = await this.backend.version();
    } catch (err) {
      report(err);
    }
  }
}
