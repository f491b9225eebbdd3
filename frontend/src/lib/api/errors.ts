/**
 * The one error type the API layer rejects with. Its message is the backend's own text, written
 * for people, so the UI shows it verbatim.
 */
export class BackendError extends Error {
  /** HTTP status when the web transport produced it. */
  readonly status?: number;
  /** The request field the backend blamed, e.g. "rows". */
  readonly field?: string;
  /** True when the user must sign in again; the login screen, not a banner, handles these. */
  readonly authRequired: boolean;
  /** Seconds until a locked-out login may be tried again. */
  readonly retryAfter?: number;
  /** Set when a change was refused because it would end work in progress in these panes. */
  readonly busy?: BusyPane[];

  constructor(
    message: string,
    opts: { status?: number; field?: string; authRequired?: boolean; retryAfter?: number; busy?: BusyPane[] } = {},
  ) {
    super(message);
    this.name = 'BackendError';
    this.status = opts.status;
    this.field = opts.field;
    this.authRequired = opts.authRequired ?? false;
    this.retryAfter = opts.retryAfter;
    this.busy = opts.busy;
  }
}

/** A pane that removing would interrupt, and what in it is busy, in words. */
export interface BusyPane {
  paneId: string;
  label: string;
  busy: string[];
}

/** The marker of the backend's refusal to remove busy panes (workspace.BusyError). */
const BUSY_MARK = ' would end work in progress (';

/**
 * The busy panes of a refused removal: from the HTTP body, or parsed from the desktop's error
 * text ("… would end work in progress (Terminal 3: sleep running in tab 1 (bash); …): confirm …").
 */
export function busyPanes(err: unknown): BusyPane[] | undefined {
  if (err instanceof BackendError && err.busy?.length) return err.busy;
  const msg = errorMessage(err);
  const i = msg.indexOf(BUSY_MARK);
  const j = msg.lastIndexOf('): confirm');
  if (i < 0 || j < i) return undefined;
  return msg
    .slice(i + BUSY_MARK.length, j)
    .split('; ')
    .map((part) => {
      const k = part.indexOf(': ');
      return { paneId: '', label: k < 0 ? part : part.slice(0, k), busy: k < 0 ? [] : [part.slice(k + 2)] };
    });
}

/** Turns anything thrown (Error, Wails' plain string rejection, …) into a readable message. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}

export function isAuthRequired(err: unknown): boolean {
  return err instanceof BackendError && err.authRequired;
}

/**
 * Runs a bound Wails call that is not a call of the table (a dialog, a stream). Wails rejects
 * with the Go error's text as a plain string; callers get a BackendError with that message.
 */
export async function callWails<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BackendError) throw err;
    throw new BackendError(errorMessage(err));
  }
}

/**
 * The error of a table call made through the desktop's App.Call: Go rejects with the JSON of
 * its error body (backend/api ErrorBody), the same body the web transport reads, so the
 * message, the field and the busy panes arrive alike on both doors.
 */
export function tableError(err: unknown): BackendError {
  if (err instanceof BackendError) return err;
  const message = errorMessage(err);
  try {
    const body = JSON.parse(message) as { error?: string; field?: string; busy?: BusyPane[]; retryAfter?: number };
    if (body && typeof body.error === 'string') {
      return new BackendError(body.error, { field: body.field || undefined, busy: body.busy, retryAfter: body.retryAfter });
    }
  } catch {
    // Not a table error body: a plain message.
  }
  return new BackendError(message);
}
