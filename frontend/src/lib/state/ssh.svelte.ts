import type { Backend, BackendEvent, RemoteSession, SSHServer, SSHServerInput } from '../api';
import { followBackend } from './follow';
import { errorMessage, normalizeSSHServers, SSH_TOPIC } from '../api';

/**
 * Saved SSH servers as the backend last told us, from pushed snapshots ('ssh'/'updated', the
 * whole list) and from our own calls, which may arrive in either order: a server is only
 * replaced by a version whose updatedAt is not older.
 *
 * As in ProviderStore, the actions reject instead of reporting to the banner: Settings and the
 * terminal menu show each error where it belongs. Passwords pass through `save` on their way to
 * the backend and are never kept here.
 */
export class SSHStore {
  servers = $state.raw<SSHServer[]>([]);
  /** True once a list has arrived. */
  loaded = $state(false);
  /** Why the last load failed; '' after a success. */
  loadError = $state('');

  /** Counts event snapshots, so a list fetched before the newest event is not applied over it. */
  private eventsSeen = 0;
  private loading: Promise<void> | null = null;

  constructor(private readonly backend: Backend) {}

  /**
   * Follows backend events, and re-reads the list when the live connection reopens (events sent
   * while it was down are gone), once something has been loaded. Returns the stop function.
   */
  sync(): () => void {
    return followBackend(
      this.backend,
      (e) => this.handleEvent(e),
      () => {
        if (this.loaded) void this.load();
      },
    );
  }

  handleEvent(e: BackendEvent): void {
    if (e.topic !== SSH_TOPIC || e.type !== 'updated') return;
    if (!Array.isArray(e.data)) {
      console.warn('clusterspace: ssh event without a server list', e.type);
      return;
    }
    this.eventsSeen++;
    this.applyList(normalizeSSHServers(e.data));
  }

  /** Reads the list; a failure lands in loadError. Concurrent calls share one request. */
  load(): Promise<void> {
    this.loading ??= this.doLoad().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async doLoad(): Promise<void> {
    const seenBefore = this.eventsSeen;
    try {
      const list = await this.backend.listSSHServers();
      this.loadError = '';
      if (this.eventsSeen === seenBefore) this.applyList(list);
    } catch (err) {
      this.loadError = errorMessage(err);
    }
  }

  /** Membership and order come from the list; no server goes back in time. */
  applyList(list: SSHServer[]): void {
    const current = new Map(this.servers.map((s) => [s.id, s]));
    this.servers = list.map((s) => newer(current.get(s.id), s));
    this.loaded = true;
  }

  byId(id: string): SSHServer | undefined {
    return this.servers.find((s) => s.id === id);
  }

  // ---- actions: each rejects with the backend's error ----------------------------------------

  /** Adds (id '') or edits a server. */
  async save(id: string, input: SSHServerInput): Promise<SSHServer> {
    const saved = await this.backend.saveSSHServer(id, input);
    const i = this.servers.findIndex((s) => s.id === saved.id);
    if (i === -1) {
      if (id === '') this.servers = [...this.servers, saved];
    } else {
      const next = this.servers.slice();
      next[i] = newer(next[i], saved);
      this.servers = next;
    }
    return saved;
  }

  async remove(id: string): Promise<void> {
    await this.backend.deleteSSHServer(id);
    this.servers = this.servers.filter((s) => s.id !== id);
  }

  sessions(serverId: string): Promise<RemoteSession[]> {
    return this.backend.remoteSessions(serverId);
  }

  killSession(serverId: string, name: string): Promise<void> {
    return this.backend.killRemoteSession(serverId, name);
  }
}

/** The incoming version unless the one we hold is strictly newer. */
function newer(held: SSHServer | undefined, incoming: SSHServer): SSHServer {
  if (!held) return incoming;
  const a = Date.parse(held.updatedAt);
  const b = Date.parse(incoming.updatedAt);
  return a > b ? held : incoming; // NaN compares false: an unparseable time never blocks an update
}
