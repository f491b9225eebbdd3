// What the web transport (http.ts) shares with no one else: URL paths, turning a failed
// response into a BackendError, the tokens kept in sessionStorage, and file downloads.
import { BackendError, type BusyPane } from './errors';

/**
 * Tokens live in sessionStorage: they survive a page reload (so a reload does not ask for the
 * password again) but not closing the tab, and other tabs or sites never see them. localStorage
 * would keep a long-lived refresh token on disk after the browser closes.
 */
export const TOKEN_STORAGE_KEY = 'clusterspace.tokens';

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  /** Epoch milliseconds when the access token expires, from the server's expiresIn. */
  expiresAt: number;
}

export interface TokenResponse {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
}

export type KeyValueStore = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export function enc(segment: string): string {
  return encodeURIComponent(segment);
}

export function tabPath(paneId: string, tabId: string): string {
  return `/api/panes/${enc(paneId)}/terminal/tabs/${enc(tabId)}`;
}

export function signedOutError(): BackendError {
  return new BackendError('You are signed out: sign in again to continue', {
    status: 401,
    authRequired: true,
  });
}

/** Builds the error a person sees from a failed response: the backend's own words when it sent some. */
export async function errorFromResponse(res: Response, authRequired = false): Promise<BackendError> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    // Best effort: the status alone still explains something.
  }
  let body: { error?: unknown; field?: unknown; retryAfter?: unknown; busy?: unknown } = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    // Not JSON (a proxy's HTML page, say): fall back to the raw text below.
  }
  const message =
    typeof body.error === 'string' && body.error
      ? body.error
      : `The server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}` +
        (text.trim() ? `: ${text.trim().slice(0, 200)}` : '');
  return new BackendError(message, {
    status: res.status,
    field: typeof body.field === 'string' ? body.field : undefined,
    retryAfter: typeof body.retryAfter === 'number' ? body.retryAfter : undefined,
    busy: Array.isArray(body.busy) ? (body.busy as BusyPane[]) : undefined,
    authRequired,
  });
}

export function readTokens(storage: KeyValueStore): Tokens | null {
  try {
    const raw = storage.getItem(TOKEN_STORAGE_KEY);
    if (!raw) return null;
    const t = JSON.parse(raw) as Partial<Tokens>;
    if (
      typeof t.accessToken === 'string' &&
      typeof t.refreshToken === 'string' &&
      typeof t.expiresAt === 'number'
    ) {
      return { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: t.expiresAt };
    }
  } catch {
    // A corrupt entry is the same as none: the user signs in again.
  }
  return null;
}

export function browserSessionStorage(): KeyValueStore {
  try {
    if (typeof sessionStorage !== 'undefined') return sessionStorage;
  } catch {
    // Some privacy modes throw on access; fall back to memory below.
  }
  const mem = new Map<string, string>();
  return {
    getItem: (k) => mem.get(k) ?? null,
    setItem: (k, v) => void mem.set(k, v),
    removeItem: (k) => void mem.delete(k),
  };
}

/** Reads the filename from a Content-Disposition header (RFC 6266 filename* wins over filename). */
export function filenameFromDisposition(header: string | null): string | null {
  if (!header) return null;
  const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[2].trim().replace(/^"|"$/g, ''));
    } catch {
      // Malformed percent-encoding: try the plain parameter.
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(header);
  if (plain) {
    const name = (plain[1] ?? plain[2] ?? '').replace(/\\(.)/g, '$1').trim();
    return name || null;
  }
  return null;
}

/** `<workspace name>.clusterspace.json`, with the name taken from the exported JSON when present. */
export function fallbackExportName(exportJson: string, id: string): string {
  let name = '';
  try {
    const v = JSON.parse(exportJson);
    name = typeof v?.name === 'string' ? v.name : typeof v?.workspace?.name === 'string' ? v.workspace.name : '';
  } catch {
    // The server sent something unparseable; the id still names the file.
  }
  const safe = (name || `workspace-${id}`).replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_').trim();
  return `${safe || 'workspace'}.clusterspace.json`;
}

export function downloadBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoking at once can cancel the download in some browsers; a moment later is safe.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

