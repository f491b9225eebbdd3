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
  /**
   * What runs in a pane the backend would not convert without `force` (field "force"): the
   * person is asked about these before the call is sent again.
   */
  readonly busy?: string[];

  constructor(
    message: string,
    opts: { status?: number; field?: string; authRequired?: boolean; retryAfter?: number; busy?: string[] } = {},
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

/**
 * The field a Go error's text names in its "field: message" prefix, if it is one of `fields`.
 * Wails passes only the text, so this is how a desktop error finds its form field.
 */
export function fieldFromMessage(message: string, fields: readonly string[]): string | undefined {
  const m = /^([A-Za-z][A-Za-z.]*): /.exec(message);
  return m && fields.includes(m[1]) ? m[1] : undefined;
}

export function isAuthRequired(err: unknown): boolean {
  return err instanceof BackendError && err.authRequired;
}

/**
 * Runs a bound Wails call. Wails rejects with the Go error's text as a plain string; callers get
 * a BackendError instead, with the field the text names when it is one of `fields`.
 */
export async function callWails<T>(fn: () => Promise<T>, fields: readonly string[] = []): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof BackendError) throw err;
    const message = errorMessage(err);
    throw new BackendError(message, { field: fieldFromMessage(message, fields) });
  }
}
