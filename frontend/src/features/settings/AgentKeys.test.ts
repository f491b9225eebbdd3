// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { BackendError, type Backend } from '../../lib/api';
import { createAppContext } from '../../lib/state/context';
import Harness from './AgentKeysHarness.test.svelte';
import { savedProvider } from './testFixtures';

function setup(set = vi.fn(async (providers: Record<string, string>) => providers)) {
  const backend = {
    kind: 'web',
    launchTemplates: vi.fn(async () => [
      { id: 'shell', name: 'Shell', command: '', installed: true },
      { id: 'claude', name: 'Claude Code', command: 'claude', wire: 'anthropic', installed: true },
      { id: 'codex', name: 'Codex CLI', command: 'codex', wire: 'openai', installed: true },
    ]),
    agentKeys: { get: vi.fn(async () => ({ codex: 'oai' })), set },
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.providers.providers = [
    savedProvider({ id: 'oai', name: 'OpenAI', kind: 'openai' }),
    savedProvider({ id: 'ant', name: 'Anthropic', kind: 'anthropic' }),
    savedProvider({ id: 'ant2', name: 'No key', kind: 'anthropic', apiKeySet: false }),
  ];
  render(Harness, { ctx });
  return { backend, set };
}

const select = (template: string) => screen.getAllByTestId('agent-key').find((s) => s.dataset.template === template) as HTMLSelectElement;
const options = (s: HTMLSelectElement) => [...s.options].map((o) => [o.value, o.textContent, o.disabled]);

describe('AgentKeys', () => {
  it('offers each agent template the providers of its protocol, and shows the assignment', async () => {
    setup();
    await vi.waitFor(() => expect(screen.getAllByTestId('agent-key')).toHaveLength(2));
    expect(options(select('claude'))).toEqual([
      ['', 'Your own login', false],
      ['ant', 'Anthropic', false],
      ['ant2', 'No key (no key)', true],
    ]);
    expect(options(select('codex'))).toEqual([
      ['', 'Your own login', false],
      ['oai', 'OpenAI', false],
    ]);
    await vi.waitFor(() => expect(select('codex').value).toBe('oai'));
    expect(select('claude').value).toBe('');
  });

  it('assigns a provider, and puts the select back with the message when refused', async () => {
    const set = vi.fn(async (providers: Record<string, string>) => providers);
    setup(set);
    await vi.waitFor(() => expect(select('codex').value).toBe('oai'));
    select('claude').value = 'ant';
    await fireEvent.change(select('claude'));
    await vi.waitFor(() => expect(set).toHaveBeenCalledWith({ codex: 'oai', claude: 'ant' }));

    set.mockRejectedValueOnce(new BackendError('provider "OpenAI" has no API key', { status: 400, field: 'providers.codex' }));
    select('codex').value = '';
    await fireEvent.change(select('codex'));
    await vi.waitFor(() => expect(screen.getByTestId('field-error').textContent).toContain('no API key'));
    expect(select('codex').value).toBe('oai');
  });
});
