/**
 * A field's error as the person reads it. The backend and the form's own checks write it as
 * "field: what to do" with the field's internal name ("apiKey: enter the OpenAI key…"); shown,
 * the name is the field's label ("API key: enter the OpenAI key…"), so it says which box is
 * meant in the words on the screen.
 */
export function readableFieldMessage(message: string, field: string, label?: string): string {
  const prefix = `${field}: `;
  return label && message.startsWith(prefix) ? `${label}: ${message.slice(prefix.length)}` : message;
}
