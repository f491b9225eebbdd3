// @vitest-environment jsdom
import { render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { BackendError, type SSHServer, type SSHServerInput } from '../../lib/api';
import SSHForm from './SSHForm.svelte';
import { draftFromServer, emptySSHDraft } from './sshFormState';
import { formDriver, savedServer } from './testFixtures';

const saved = savedServer();

function setup(server?: SSHServer, onsave: (input: SSHServerInput) => Promise<unknown> = async () => {}) {
  const save = vi.fn(onsave);
  const onclose = vi.fn();
  render(SSHForm, { server, initial: server ? draftFromServer(server) : emptySSHDraft(), onsave: save, onclose });
  return { save, onclose, ...formDriver('ssh-save') };
}

describe('SSHForm', () => {
  it('opens a saved server with its values, the port included', () => {
    const { field } = setup(saved);
    expect(field('ssh-host').value).toBe('10.0.0.5');
    expect(field('ssh-port').value).toBe('2222');
  });

  it('sends a typed password when adding', async () => {
    const { save, type, submit } = setup();
    await type('ssh-name', 'box');
    await type('ssh-host', 'h');
    await type('ssh-user', 'me');
    await type('ssh-key-path', '/home/me/.ssh/id');
    await type('ssh-password', 'hunter2');
    await submit();
    await vi.waitFor(() => expect(save).toHaveBeenCalled());
    expect(save.mock.calls[0][0]).toEqual({ name: 'box', host: 'h', port: 0, user: 'me', keyPath: '/home/me/.ssh/id', password: 'hunter2' });
  });

  it('shows a bad port, and the backend’s field errors, next to their fields until typed over', async () => {
    const { save, type, submit } = setup(undefined, async () => {
      throw new BackendError('keyPath: "/nope" is not a readable key file', { field: 'keyPath' });
    });
    await type('ssh-port', 'ssh');
    await submit();
    expect(save).not.toHaveBeenCalled();
    expect(screen.getByTestId('field-error').dataset.field).toBe('port');
    await type('ssh-port', '22');
    expect(screen.queryByTestId('field-error')).toBeNull();
    await type('ssh-key-path', '/nope');
    await submit();
    await vi.waitFor(() => expect(screen.getByTestId('field-error').dataset.field).toBe('keyPath'));
    // The field is named by its label, as the form shows it, not by its internal name.
    expect(screen.getByTestId('field-error').textContent).toBe('Key file: "/nope" is not a readable key file');
  });
});
