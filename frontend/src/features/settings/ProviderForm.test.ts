// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { BackendError, type Provider, type ProviderInput } from '../../lib/api';
import ProviderForm from './ProviderForm.svelte';
import { draftFromProvider, emptyDraft } from './formState';
import { formDriver, savedProvider } from './testFixtures';

const saved = savedProvider();

function setup(provider?: Provider, onsave: (input: ProviderInput) => Promise<unknown> = async () => {}) {
  const save = vi.fn(onsave);
  const onclose = vi.fn();
  render(ProviderForm, {
    provider,
    initial: provider ? draftFromProvider(provider) : emptyDraft(),
    onsave: save,
    onclose,
  });
  return { save, onclose, ...formDriver('provider-save') };
}

describe('ProviderForm', () => {
  it('shows the masked key of a saved provider, never the key', () => {
    setup(saved);
    expect(screen.getByTestId('provider-key-state').textContent).toContain('key set: sk-…abcd');
    expect(screen.getByTestId('provider-api-key').getAttribute('type')).toBe('password');
    expect((screen.getByTestId('provider-api-key') as HTMLInputElement).value).toBe('');
  });

  it('closes without saving when nothing changed', async () => {
    const { save, onclose, submit } = setup(saved);
    await submit();
    expect(save).not.toHaveBeenCalled();
    expect(onclose).toHaveBeenCalledTimes(1);
  });

  it('omits the key when only other fields change', async () => {
    const { save, onclose, type, submit } = setup(saved);
    await type('provider-model', 'gpt-4.1');
    await submit();
    await vi.waitFor(() => expect(onclose).toHaveBeenCalled());
    const input = save.mock.calls[0][0];
    expect(input.model).toBe('gpt-4.1');
    expect('apiKey' in input).toBe(false);
  });

  it("sends '' after Remove, and the typed value after Replace", async () => {
    const first = setup(saved);
    await fireEvent.click(screen.getByTestId('provider-key-remove'));
    expect(first.field('provider-api-key').disabled).toBe(true);
    await first.submit();
    await vi.waitFor(() => expect(first.save).toHaveBeenCalled());
    expect(first.save.mock.calls[0][0].apiKey).toBe('');
    document.body.innerHTML = '';

    const second = setup(saved);
    await fireEvent.click(screen.getByTestId('provider-key-replace'));
    expect(document.activeElement).toBe(second.field('provider-api-key'));
    await second.type('provider-api-key', 'sk-brand-new-key');
    await second.submit();
    await vi.waitFor(() => expect(second.save).toHaveBeenCalled());
    expect(second.save.mock.calls[0][0].apiKey).toBe('sk-brand-new-key');
  });

  it("shows the backend's field error next to that field, and other errors above the buttons", async () => {
    let err = new BackendError('name: "OpenAI" is already used by another provider; pick another name', { field: 'name' });
    const { save, onclose, type, submit } = setup(undefined, async () => {
      throw err;
    });
    await type('provider-name', 'OpenAI');
    await type('provider-model', 'gpt-4o');
    await submit();
    const shown = await screen.findByTestId('field-error');
    expect(shown.dataset.field).toBe('name');
    expect(shown.textContent).toContain('is already used by another provider');
    expect(onclose).not.toHaveBeenCalled();

    // Typing in the field takes its error back.
    await type('provider-name', 'OpenAI 2');
    expect(screen.queryByTestId('field-error')).toBeNull();

    err = new BackendError('could not store the API key: the keyring is locked');
    await submit();
    expect((await screen.findByTestId('provider-form-error')).textContent).toContain('keyring is locked');
    expect(save).toHaveBeenCalledTimes(2);
  });

  it('catches a number that does not parse before calling the backend', async () => {
    const { save, type, submit } = setup();
    await type('provider-temperature', 'warm');
    await submit();
    const shown = await screen.findByTestId('field-error');
    expect(shown.dataset.field).toBe('temperature');
    expect(save).not.toHaveBeenCalled();
  });

  it('shows the default base URL of the chosen kind as the placeholder', async () => {
    const { field } = setup();
    expect(field('provider-base-url').placeholder).toBe('https://api.openai.com/v1');
    await fireEvent.change(screen.getByTestId('provider-kind'), { target: { value: 'anthropic' } });
    expect(field('provider-base-url').placeholder).toBe('https://api.anthropic.com');
  });
});
