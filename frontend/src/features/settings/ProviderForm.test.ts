// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { BackendError, type Provider, type ProviderInput, type TestResult } from '../../lib/api';
import ProviderForm from './ProviderForm.svelte';
import { draftFromProvider, emptyDraft } from './formState';
import { formDriver } from './testFixtures';

function setup(
  provider?: Provider,
  onsave: (input: ProviderInput) => Promise<unknown> = async () => {},
  ontest?: (input: ProviderInput) => Promise<TestResult>,
) {
  const save = vi.fn(onsave);
  const onclose = vi.fn();
  render(ProviderForm, {
    provider,
    initial: provider ? draftFromProvider(provider) : emptyDraft(),
    onsave: save,
    ontest,
    onclose,
  });
  return { save, onclose, ...formDriver('provider-save') };
}

describe('ProviderForm', () => {
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

  it('shows a test refused for a missing key under the API key field, named as the form names it', async () => {
    setup(undefined, undefined, async () => {
      throw new BackendError('apiKey: enter the OpenAI key to test this provider', { field: 'apiKey' });
    });
    await fireEvent.click(screen.getByTestId('provider-form-test'));
    const shown = await screen.findByTestId('field-error');
    expect(shown.dataset.field).toBe('apiKey');
    expect(shown.textContent).toBe('API key: enter the OpenAI key to test this provider');
    expect(screen.queryByTestId('provider-form-test-result')).toBeNull();
  });
});
