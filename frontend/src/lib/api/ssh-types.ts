// Wire types of the saved SSH servers and their remote tmux sessions (re-exported by types.ts).
import { wireSecretInput } from './secretInput';

// ---- SSH servers ----------------------------------------------------------------------------

/** The event topic whose 'updated' events carry the full SSHServer list. */
export const SSH_TOPIC = 'ssh';

/** A saved SSH server. Its password never reaches the UI: only whether one is stored. */
export interface SSHServer {
  id: string;
  name: string;
  host: string;
  /** 0 = ssh's default (22, or what ~/.ssh/config says). */
  port: number;
  /** '' = ssh's default. */
  user: string;
  /** '' = ssh's default keys. */
  keyPath: string;
  passwordSet: boolean;
  createdAt: string;
  updatedAt: string;
}

/** An add or an edit. */
export interface SSHServerInput {
  name: string;
  host: string;
  port: number;
  user: string;
  keyPath: string;
  /** Absent keeps the stored password; '' removes it; a value replaces it. */
  password?: string;
}

/** A tmux session on a server, as "Sessions…" lists them. */
export interface RemoteSession {
  name: string;
  windows: number;
  attached: boolean;
  /** RFC 3339. */
  created: string;
  /** Named like a ClusterSpace pane's session (clusterspace-pane-…). */
  pane: boolean;
}

/** The exact SSHServerInput to send: the known fields, and password only when the caller set it. */
export function wireSSHInput(input: SSHServerInput): SSHServerInput {
  return wireSecretInput(input, ['name', 'host', 'port', 'user', 'keyPath'], 'password');
}

export function normalizeSSHServer(raw: unknown): SSHServer {
  const s = (raw ?? {}) as Partial<SSHServer>;
  return {
    id: String(s.id ?? ''),
    name: typeof s.name === 'string' ? s.name : '',
    host: typeof s.host === 'string' ? s.host : '',
    port: typeof s.port === 'number' ? s.port : 0,
    user: typeof s.user === 'string' ? s.user : '',
    keyPath: typeof s.keyPath === 'string' ? s.keyPath : '',
    passwordSet: s.passwordSet === true,
    createdAt: typeof s.createdAt === 'string' ? s.createdAt : '',
    updatedAt: typeof s.updatedAt === 'string' ? s.updatedAt : '',
  };
}

export function normalizeSSHServers(raw: unknown): SSHServer[] {
  return Array.isArray(raw) ? raw.map(normalizeSSHServer) : [];
}

export function normalizeRemoteSessions(raw: unknown): RemoteSession[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((r) => {
    const s = (r ?? {}) as Partial<RemoteSession>;
    return {
      name: typeof s.name === 'string' ? s.name : '',
      windows: typeof s.windows === 'number' ? s.windows : 0,
      attached: s.attached === true,
      created: typeof s.created === 'string' ? s.created : '',
      pane: s.pane === true,
    };
  });
}
