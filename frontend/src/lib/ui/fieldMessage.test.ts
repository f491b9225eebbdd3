import { describe, expect, it } from 'vitest';
import { readableFieldMessage } from './fieldMessage';

describe('readableFieldMessage', () => {
  it("puts the field's label where its internal name was", () => {
    expect(readableFieldMessage('apiKey: enter the OpenAI key to test this provider', 'apiKey', 'API key')).toBe(
      'API key: enter the OpenAI key to test this provider',
    );
  });

  it('leaves a message that names no field, or another one, as it is', () => {
    expect(readableFieldMessage('the keyring is locked', 'apiKey', 'API key')).toBe('the keyring is locked');
    expect(readableFieldMessage('model: must not be empty', 'apiKey', 'API key')).toBe('model: must not be empty');
    expect(readableFieldMessage('apiKey: x', 'apiKey')).toBe('apiKey: x');
  });
});
