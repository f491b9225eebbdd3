import { errorMessage, isAuthRequired } from '../api';

export interface Notice {
  id: number;
  message: string;
}

/** Older errors beyond this are dropped: the banner is for what just happened, not a log. */
const MAX_NOTICES = 5;

/** How long an error stays up: long enough to read two lines, short enough not to linger. */
export const NOTICE_TTL_MS = 12_000;

/** Errors waiting for the user to read them. Nothing from the backend is swallowed: it lands here. */
export class Notices {
  items = $state.raw<Notice[]>([]);
  private nextId = 1;

  constructor(private readonly ttlMs = NOTICE_TTL_MS) {}

  /** Records an error for the banner. Sign-in errors are left to the login screen. */
  report = (err: unknown): void => {
    if (isAuthRequired(err)) return;
    const message = errorMessage(err);
    const last = this.items[this.items.length - 1];
    if (last?.message === message) return; // the same failure twice in a row says nothing new
    const id = this.nextId++;
    this.items = [...this.items, { id, message }].slice(-MAX_NOTICES);
    setTimeout(() => this.dismiss(id), this.ttlMs);
  };

  dismiss(id: number): void {
    this.items = this.items.filter((n) => n.id !== id);
  }

  dismissAll(): void {
    this.items = [];
  }
}
