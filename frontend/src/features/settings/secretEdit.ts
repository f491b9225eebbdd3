/**
 * What the user did to a stored secret (an API key, an SSH password). Kept apart from the form's
 * draft so a secret never travels with it: `value` is the password input's own content and
 * nothing else holds it.
 */
export interface SecretEdit {
  /** What is typed in the input; blank means "leave the stored secret alone". */
  value: string;
  /** The user asked to remove the stored secret. */
  remove: boolean;
}

/**
 * The secret to send: undefined (omit the field) unless the user typed a new one or asked to
 * remove it, because the backend keeps an omitted secret and deletes an empty one.
 */
export function secretChange(edit: SecretEdit): string | undefined {
  if (edit.remove) return '';
  if (edit.value.trim()) return edit.value;
  return undefined;
}
