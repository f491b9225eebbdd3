// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { BackendError, type Backend, type SSHServer } from '../../lib/api';
import { createAppContext } from '../../lib/state/context';
import Harness from './SSHTabHarness.test.svelte';

function server(id: string, over: Partial<SSHServer> = {}): SSHServer {
  return { id, name: `box ${id}`, host: `${id}.example`, port: 0, user: 'me', keyPath: '', passwordSet: false, createdAt: '', updatedAt: '', ...over };
}

function setup(over: Partial<Backend> = {}) {
  const backend = {
    kind: 'web',
    listSSHServers: vi.fn(async () => [server('a', { passwordSet: true, port: 2222 }), server('b')]),
    saveSSHServer: vi.fn(async () => server('c')),
    deleteSSHServer: vi.fn(async () => {}),
    remoteSessions: vi.fn(async () => [
      { name: 'clusterspace-pane-abcd1234', windows: 2, attached: true, created: '2025-01-01T10:00:00Z', pane: true },
      { name: 'misc', windows: 1, attached: false, created: '', pane: false },
    ]),
    killRemoteSession: vi.fn(async () => {}),
    ...over,
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  render(Harness, { ctx });
  return { ctx, backend };
}

const rows = () => screen.queryAllByTestId('ssh-row');
const rowOf = (id: string) => rows().find((r) => r.dataset.serverId === id)!;
const within = (el: HTMLElement, testid: string) => el.querySelector<HTMLElement>(`[data-testid="${testid}"]`)!;

describe('SSHTab', () => {
  it('lists the saved servers with their target and password state', async () => {
    setup();
    await vi.waitFor(() => expect(rows()).toHaveLength(2));
    expect(rows().map((r) => [r.dataset.serverId, r.dataset.name])).toEqual([
      ['a', 'box a'],
      ['b', 'box b'],
    ]);
    expect(within(rowOf('a'), 'ssh-target').textContent).toBe('me@a.example:2222');
    expect(within(rowOf('a'), 'ssh-password-badge')).toBeTruthy();
    expect(within(rowOf('b'), 'ssh-password-badge')).toBeNull();
  });

  it('adds a server through the form', async () => {
    const { backend } = setup();
    await vi.waitFor(() => expect(rows()).toHaveLength(2));
    await fireEvent.click(screen.getByTestId('ssh-add'));
    await fireEvent.input(screen.getByTestId('ssh-name'), { target: { value: 'new' } });
    await fireEvent.input(screen.getByTestId('ssh-host'), { target: { value: 'new.example' } });
    await fireEvent.click(screen.getByTestId('ssh-save'));
    await vi.waitFor(() => expect(backend.saveSSHServer).toHaveBeenCalledWith('', { name: 'new', host: 'new.example', port: 0, user: '', keyPath: '' }));
    await vi.waitFor(() => expect(rows().map((r) => r.dataset.serverId)).toEqual(['a', 'b', 'c']));
  });

  it('deletes only after the confirmation', async () => {
    const { backend } = setup();
    await vi.waitFor(() => expect(rows()).toHaveLength(2));
    await fireEvent.click(within(rowOf('b'), 'ssh-delete'));
    await fireEvent.click(screen.getByTestId('confirm-cancel'));
    expect(backend.deleteSSHServer).not.toHaveBeenCalled();
    await fireEvent.click(within(rowOf('b'), 'ssh-delete'));
    expect(screen.getByTestId('confirm-dialog').textContent).toContain('Delete "box b"?');
    await fireEvent.click(screen.getByTestId('confirm-ok'));
    await vi.waitFor(() => expect(rows().map((r) => r.dataset.serverId)).toEqual(['a']));
    expect(backend.deleteSSHServer).toHaveBeenCalledWith('b');
  });

  it('lists the remote tmux sessions and kills one after confirming', async () => {
    const { backend } = setup();
    await vi.waitFor(() => expect(rows()).toHaveLength(2));
    await fireEvent.click(within(rowOf('a'), 'ssh-sessions'));
    await vi.waitFor(() => expect(screen.queryAllByTestId('ssh-session')).toHaveLength(2));
    expect(backend.remoteSessions).toHaveBeenCalledWith('a');
    expect(screen.getAllByTestId('ssh-session').map((s) => s.dataset.name)).toEqual(['clusterspace-pane-abcd1234', 'misc']);
    await fireEvent.click(screen.getAllByTestId('ssh-session-kill')[1]);
    expect(screen.getByTestId('confirm-dialog').textContent).toContain('"misc"');
    await fireEvent.click(screen.getByTestId('confirm-ok'));
    await vi.waitFor(() => expect(backend.killRemoteSession).toHaveBeenCalledWith('a', 'misc'));
    await vi.waitFor(() => expect(backend.remoteSessions).toHaveBeenCalledTimes(2)); // listed again
  });

  it("shows ssh's error text when the server cannot be reached", async () => {
    setup({
      remoteSessions: vi.fn(async () => Promise.reject(new BackendError('ssh: connect to host b.example port 22: Connection refused', { status: 502 }))),
    });
    await vi.waitFor(() => expect(rows()).toHaveLength(2));
    await fireEvent.click(within(rowOf('b'), 'ssh-sessions'));
    await vi.waitFor(() => expect(screen.getByTestId('ssh-sessions-error').textContent).toBe('ssh: connect to host b.example port 22: Connection refused'));
    expect(screen.queryAllByTestId('ssh-session')).toHaveLength(0);
  });
});
