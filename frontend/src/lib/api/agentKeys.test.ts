import { describe, expect, it } from 'vitest';
import { AgentKeysCalls } from './agentKeys';
import { normalizeLaunchTemplates } from './types';

describe('agent keys', () => {
  it('reads and sets the assignments through the table calls, dropping cleared ones', async () => {
    const sent: [string, unknown][] = [];
    const calls = new AgentKeysCalls((async (name: string, args: unknown) => {
      sent.push([name, args]);
      return { providers: name === 'AgentKeys' ? { claude: 'prov-1', codex: '' } : { codex: 'prov-2' } };
    }) as never);
    expect(await calls.get()).toEqual({ claude: 'prov-1' });
    expect(await calls.set({ claude: '', codex: 'prov-2' })).toEqual({ codex: 'prov-2' });
    expect(sent).toEqual([
      ['AgentKeys', {}],
      ['SetAgentKeys', { keys: { providers: { claude: '', codex: 'prov-2' } } }],
    ]);
  });

  it('a null answer is no assignment', async () => {
    const calls = new AgentKeysCalls((async () => null) as never);
    expect(await calls.get()).toEqual({});
  });

  it('keeps an agent template\'s wire in the template list', () => {
    expect(normalizeLaunchTemplates([{ id: 'claude', name: 'Claude Code', command: 'claude', wire: 'anthropic', installed: true }, { id: 'shell', name: 'Shell', command: '' }])).toEqual([
      { id: 'claude', name: 'Claude Code', command: 'claude', wire: 'anthropic', installed: true },
      { id: 'shell', name: 'Shell', command: '', installed: true },
    ]);
  });
});
