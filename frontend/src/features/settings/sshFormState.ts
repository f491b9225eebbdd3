// The SSH server form's state as pure functions, as formState.ts is for providers: the inputs
// as typed, how they become an SSHServerInput, and what an edit changed.
import type { SSHServer, SSHServerInput } from '../../lib/api';

/** The form's inputs as typed; the port stays a string until saving. */
export interface SSHDraft {
  name: string;
  host: string;
  /** '' = ssh's default. */
  port: string;
  user: string;
  keyPath: string;
}

/**
 * What the user did to the password, kept apart from the draft so a password never travels with
 * it: `value` is the password input's own content and nothing else holds it.
 */
export interface PasswordEdit {
  /** What is typed in the password input; blank means "leave the password alone". */
  value: string;
  /** The user asked to remove the stored password. */
  remove: boolean;
}

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

/**
 * The password part of an input: omitted unless the user typed a new password or asked to
 * remove the stored one, because an omitted password is kept by the backend and an empty one is
 * deleted.
 */
export function passwordChange(pw: PasswordEdit): Pick<SSHServerInput, 'password'> {
  if (pw.remove) return { password: '' };
  if (pw.value.trim()) return { password: pw.value };
  return {};
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
