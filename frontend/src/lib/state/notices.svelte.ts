import { errorMessage, isAuthRequired } from '../api';

export interface Notice {
  id: number;
  message: string;
}

/** Older errors beyond this are dropped: the banner is for what just happened, not a log. */
const MAX_NOTICES = 5;

/** Errors waiting for the user to read them. Nothing from the backend is swallowed: it lands here. */
export class Notices {
  items = $state.raw<Notice[]>([]);
  private nextId = 1;

  /** Records an error for the banner. Sign-in errors are left to the login screen. */
  report = (err: unknown): void => {
    if (isAuthRequired(err)) return;
    const message = errorMessage(err);
    const last = this.items[this.items.length - 1];
    if (last?.message === message) return; // the same failure twice in a row says nothing new
    this.items = [...this.items, { id: this.nextId++, message }].slice(-MAX_NOTICES);
  };

  dismissAll(): void {
    this.items = [];
  }
}
