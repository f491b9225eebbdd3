// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import ProviderForm from './ProviderForm.svelte';
import SSHForm from './SSHForm.svelte';
import { draftFromProvider } from './formState';
import { draftFromServer } from './sshFormState';
import { formDriver, savedProvider, savedServer } from './testFixtures';

// The provider's API key and the SSH server's password follow one rule: the form says a stored
// one is set and never shows it; left empty it is kept (not sent), Remove sends '', and anything
// typed after Replace replaces it.
const forms = [
  {
    name: 'ProviderForm',
    open: (onsave: (input: object) => Promise<unknown>, onclose: () => void) =>
      render(ProviderForm, { provider: savedProvider(), initial: draftFromProvider(savedProvider()), onsave, onclose }),
    testid: { save: 'provider-save', input: 'provider-api-key', state: 'provider-key' },
    secret: 'apiKey',
    setText: 'key set: sk-…abcd',
    other: { testid: 'provider-model', field: 'model', value: 'gpt-4.1' },
  },
  {
    name: 'SSHForm',
    open: (onsave: (input: object) => Promise<unknown>, onclose: () => void) =>
      render(SSHForm, { server: savedServer(), initial: draftFromServer(savedServer()), onsave, onclose }),
    testid: { save: 'ssh-save', input: 'ssh-password', state: 'ssh-password' },
    secret: 'password',
    setText: 'password set',
    other: { testid: 'ssh-host', field: 'host', value: 'build.example.com' },
  },
];

describe.each(forms)('$name and its stored secret', (f) => {
  function setup() {
    const save = vi.fn(async (_input: object) => {});
    const onclose = vi.fn();
    f.open(save, onclose);
    const sent = () => save.mock.calls[0][0] as Record<string, unknown>;
    return { save, onclose, sent, ...formDriver(f.testid.save) };
  }

  it('says it is set but never shows it, and closes without saving when nothing changed', async () => {
    const { save, onclose, field, submit } = setup();
    expect(screen.getByTestId(`${f.testid.state}-state`).textContent).toContain(f.setText);
    expect(field(f.testid.input).type).toBe('password');
    expect(field(f.testid.input).value).toBe('');
    await submit();
    expect(save).not.toHaveBeenCalled();
    expect(onclose).toHaveBeenCalledTimes(1);
  });

  it('leaves it out when only another field changes', async () => {
    const { onclose, sent, type, submit } = setup();
    await type(f.other.testid, f.other.value);
    await submit();
    await vi.waitFor(() => expect(onclose).toHaveBeenCalled());
    expect(sent()[f.other.field]).toBe(f.other.value);
    expect(f.secret in sent()).toBe(false);
  });

  it("sends '' after Remove", async () => {
    const { save, sent, field, submit } = setup();
    await fireEvent.click(screen.getByTestId(`${f.testid.state}-remove`));
    expect(field(f.testid.input).disabled).toBe(true);
    await submit();
    await vi.waitFor(() => expect(save).toHaveBeenCalled());
    expect(sent()[f.secret]).toBe('');
  });

  it('sends what is typed after Replace, which puts the cursor in the input', async () => {
    const { save, sent, field, type, submit } = setup();
    await fireEvent.click(screen.getByTestId(`${f.testid.state}-replace`));
    expect(document.activeElement).toBe(field(f.testid.input));
    await type(f.testid.input, 'brand-new-secret');
    await submit();
    await vi.waitFor(() => expect(save).toHaveBeenCalled());
    expect(sent()[f.secret]).toBe('brand-new-secret');
  });
});
