import type {
  AgentKeyMap,
  Backend,
  BackendEvent,
  Discovered,
  PriceTable,
  Provider,
  ProviderInput,
  ProviderList,
  SecretsBackend,
  TestResult,
} from '../api';
import { followList, isRecord } from './follow';
import { mergeList, withNewer } from './versions';
import { errorMessage } from '../api';
import { attempt } from './load';

/** The event topic whose data is a full ProviderList snapshot. */
export const PROVIDERS_TOPIC = 'providers';

/** The latest "Test connection" of one provider. */
export interface ProviderTest {
  running: boolean;
  result?: TestResult;
}

/**
 * Model providers and their defaults as the backend last told us, from pushed snapshots and from
 * our own calls, which (as in WorkspaceStore) may arrive in either order: a provider is only
 * replaced by a version whose updatedAt is not older.
 *
 * Unlike WorkspaceStore, the actions reject instead of reporting to the banner: they are called
 * from the Settings panel, which shows each error next to the field or control it concerns.
 *
 * API keys pass through `save` on their way to the backend and are never kept here.
 */
export class ProviderStore {
  providers = $state.raw<Provider[]>([]);
  defaultId = $state('');
  criticDefaultId = $state('');
  secretsBackend = $state<SecretsBackend | ''>('');
  /** True once a list has arrived. */
  loaded = $state(false);
  /** Why the last load failed; '' after a success. */
  loadError = $state('');
  /** Provider id → its latest connection test. */
  tests = $state.raw<Record<string, ProviderTest>>({});
  /** Agent template id → the provider whose key its panes use (absent: the person's own login). */
  agentKeys = $state.raw<AgentKeyMap>({});

  /** Counts event snapshots, so a list fetched before the newest event is not applied over it. */
  private eventsSeen = 0;

  constructor(private readonly backend: Backend) {}

  /** Follows the backend's providers events and reloads after a reconnect (see followList). */
  sync(): () => void {
    return followList(this.backend, this);
  }

  handleEvent(e: BackendEvent): void {
    if (e.topic !== PROVIDERS_TOPIC) return;
    if (!isProviderList(e.data)) {
      console.warn('clusterspace: providers event without a ProviderList', e.type);
      return;
    }
    this.eventsSeen++;
    this.applyList(e.data);
  }

  /** Reads the whole list; a failure lands in loadError for the Settings panel to show. */
  async load(): Promise<void> {
    const seenBefore = this.eventsSeen;
    this.loadError = await attempt(async () => {
      const list = await this.backend.listProviders();
      // An event that arrived meanwhile is a full snapshot at least as new as this answer.
      if (this.eventsSeen === seenBefore) this.applyList(list);
    });
  }

  /** Membership, order and defaults come from the list; no provider goes back in time. */
  applyList(list: ProviderList): void {
    this.providers = mergeList(this.providers, list.providers);
    this.defaultId = list.defaultId;
    this.criticDefaultId = list.criticDefaultId;
    this.secretsBackend = list.secretsBackend === 'keyring' || list.secretsBackend === 'file' ? list.secretsBackend : '';
    this.loaded = true;
    const ids = new Set(this.providers.map((p) => p.id));
    if (Object.keys(this.tests).some((id) => !ids.has(id))) {
      this.tests = Object.fromEntries(Object.entries(this.tests).filter(([id]) => ids.has(id)));
    }
  }

  /** Applies one provider returned by a call; `insert` for a new one. */
  applyProvider(p: Provider, insert = false): void {
    if (insert && !this.providers.some((q) => q.id === p.id)) this.providers = [...this.providers, p];
    else this.providers = withNewer(this.providers, p);
  }

  byId(id: string): Provider | undefined {
    return this.providers.find((p) => p.id === id);
  }

  // ---- actions: each rejects with the backend's error ----------------------------------------

  /** Adds (id '') or edits a provider. */
  async save(id: string, input: ProviderInput): Promise<Provider> {
    const saved = await this.backend.saveProvider(id, input);
    this.applyProvider(saved, id === '');
    this.forgetTest(saved.id); // its settings changed, so an earlier result says nothing now
    // A first provider becomes both defaults on the backend; read its choice rather than guess it.
    if (id === '') await this.load();
    return saved;
  }

  async remove(id: string): Promise<void> {
    await this.backend.deleteProvider(id);
    this.providers = this.providers.filter((p) => p.id !== id);
    this.forgetTest(id);
    // Defaults that pointed at it are cleared on the backend.
    await this.load();
  }

  async setDefaults(defaultId: string, criticDefaultId: string): Promise<void> {
    this.applyList(await this.backend.setDefaultProviders(defaultId, criticDefaultId));
  }

  /** Runs "Test connection"; never rejects: a failed call is recorded as a failed test. */
  async test(id: string): Promise<void> {
    this.setTest(id, { running: true });
    let result: TestResult;
    try {
      result = await this.backend.testProvider(id);
    } catch (err) {
      result = { ok: false, message: errorMessage(err), latencyMs: 0 };
    }
    // The provider may have been deleted while the test ran.
    if (this.byId(id)) this.setTest(id, { running: false, result });
    else this.forgetTest(id);
  }

  /** Tests the form's values before saving; rejects with a BackendError naming a bad field. */
  testUnsaved(id: string, input: ProviderInput): Promise<TestResult> {
    return this.backend.testUnsavedProvider(id, input);
  }

  discover(host: string): Promise<Discovered[]> {
    return this.backend.discoverProviders(host);
  }

  prices(): Promise<PriceTable> {
    return this.backend.prices();
  }

  setPrices(prices: PriceTable): Promise<void> {
    return this.backend.setPrices(prices);
  }

  /** Whether this backend lets keys be assigned to agent templates. */
  get agentKeysOffered(): boolean {
    return !!this.backend.agentKeys;
  }

  async loadAgentKeys(): Promise<void> {
    if (this.backend.agentKeys) this.agentKeys = await this.backend.agentKeys.get();
  }

  /** Assigns a provider's key to an agent template ('' : the person's own login); rejects naming providers.<template>. */
  async setAgentKey(template: string, providerId: string): Promise<void> {
    if (!this.backend.agentKeys) return;
    this.agentKeys = await this.backend.agentKeys.set({ ...this.agentKeys, [template]: providerId });
  }

  private setTest(id: string, t: ProviderTest): void {
    this.tests = { ...this.tests, [id]: t };
  }

  private forgetTest(id: string): void {
    if (!(id in this.tests)) return;
    const next = { ...this.tests };
    delete next[id];
    this.tests = next;
  }
}

function isProviderList(v: unknown): v is ProviderList {
  return (
    isRecord(v) &&
    Array.isArray(v.providers) &&
    typeof v.defaultId === 'string' &&
    typeof v.criticDefaultId === 'string'
  );
}
