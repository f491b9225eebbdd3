// The SSH server form's state as pure functions, as formState.ts is for providers: the inputs
// as typed, how they become an SSHServerInput, and what an edit changed.
import type { SSHServer, SSHServerInput } from '../../lib/api';
import { secretChange, type SecretEdit } from './secretEdit';

/** The form's inputs as typed; the port stays a string until saving. */
export interface SSHDraft {
  name: string;
  host: string;
  /** '' = ssh's default. */
  port: string;
  user: string;
  keyPath: string;
}

/** What the user did to the password (see SecretEdit). */
export type PasswordEdit = SecretEdit;

export const SSH_FORM_FIELDS = ['name', 'host', 'port', 'user', 'keyPath', 'password'] as const;
export type SSHFormField = (typeof SSH_FORM_FIELDS)[number];

export function isSSHFormField(field: string | undefined): field is SSHFormField {
  return (SSH_FORM_FIELDS as readonly string[]).includes(field ?? '');
}

export function emptySSHDraft(): SSHDraft {
  return { name: '', host: '', port: '', user: '', keyPath: '' };
}

/** The draft for editing a saved server; port 0 (ssh's default) shows as empty. */
export function draftFromServer(s: SSHServer): SSHDraft {
  return { name: s.name, host: s.host, port: s.port ? String(s.port) : '', user: s.user, keyPath: s.keyPath };
}

/** The password part of an input, per secretChange: omitted, '' (remove) or the new one. */
export function passwordChange(pw: PasswordEdit): Pick<SSHServerInput, 'password'> {
  const password = secretChange(pw);
  return password === undefined ? {} : { password };
}

export type SSHDraftResult = { ok: true; input: SSHServerInput } | { ok: false; field: SSHFormField; message: string };

/**
 * The input to send, or the port when it is not a number. Everything else is the backend's to
 * check (it names the field), so there is one set of rules.
 */
export function toSSHInput(d: SSHDraft, pw: PasswordEdit): SSHDraftResult {
  const p = d.port.trim();
  let port = 0;
  if (p) {
    if (!/^\d+$/.test(p)) {
      return { ok: false, field: 'port', message: `port: "${p}" is not a port number: enter one such as 22, or leave it empty for ssh's default` };
    }
    port = Number(p);
  }
  return {
    ok: true,
    input: {
      name: d.name.trim(),
      host: d.host.trim(),
      port,
      user: d.user.trim(),
      keyPath: d.keyPath.trim(),
      ...passwordChange(pw),
    },
  };
}

/** Whether saving `input` would change `s` as the backend stores it. */
export function sshChanged(s: SSHServer, input: SSHServerInput): boolean {
  return (
    input.name !== s.name ||
    input.host !== s.host ||
    input.port !== s.port ||
    input.user !== s.user ||
    input.keyPath !== s.keyPath ||
    input.password !== undefined
  );
}

/** user@host:port as ssh would read it, leaving out what is ssh's default. */
export function sshTarget(s: Pick<SSHServer, 'host' | 'port' | 'user'>): string {
  return `${s.user ? `${s.user}@` : ''}${s.host}${s.port ? `:${s.port}` : ''}`;
}
