// Keys for agent panes: which provider's key each agent template's panes (Claude Code, Codex
// CLI) use, by template id. AgentKeysCalls is its calls of the table over either transport;
// the Backend exposes it as `backend.agentKeys`. The key itself stays in the backend's vault.
import type { Call } from './table';

/** Template id → provider id; a template absent uses the person's own login of the tool. */
export type AgentKeyMap = Record<string, string>;

export interface AgentKeysApi {
  get(): Promise<AgentKeyMap>;
  /** Replaces every assignment ('' clears one); a provider of the wrong kind or without a key rejects naming providers.<template>. */
  set(providers: AgentKeyMap): Promise<AgentKeyMap>;
}

const clean = (raw: unknown): AgentKeyMap => {
  const p = (raw as { providers?: unknown } | null)?.providers;
  if (!p || typeof p !== 'object') return {};
  return Object.fromEntries(Object.entries(p as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''));
};

export class AgentKeysCalls implements AgentKeysApi {
  constructor(private readonly call: Call) {}
  async get() {
    return clean(await this.call('AgentKeys', {}));
  }
  async set(providers: AgentKeyMap) {
    return clean(await this.call('SetAgentKeys', { keys: { providers } }));
  }
}
