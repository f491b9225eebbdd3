// An add-or-edit input that carries a stored secret (a provider's API key, an SSH server's
// password), as it goes on the wire.

/**
 * The exact input to send: only its known `fields` (the server refuses unknown ones), and the
 * `secret` only when the caller set it, because an absent secret and an empty one mean different
 * things (keep the stored one, remove it).
 */
export function wireSecretInput<T extends object>(input: T, fields: readonly (keyof T)[], secret: keyof T): T {
  const wire = {} as T;
  for (const k of fields) wire[k] = input[k];
  if (input[secret] !== undefined) wire[secret] = input[secret];
  return wire;
}
