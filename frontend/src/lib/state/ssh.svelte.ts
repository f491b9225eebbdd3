import type { Backend, BackendEvent, RemoteSession, SSHServer, SSHServerInput } from '../api';
import { followList } from './follow';
import { mergeList, withNewer } from './versions';
import { normalizeSSHServers, SSH_TOPIC } from '../api';
import { attempt, SharedRead } from './load';

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
  private readonly loading = new SharedRead();

  constructor(private readonly backend: Backend) {}

  /** Follows the backend's servers events and reloads after a reconnect (see followList). */
  sync(): () => void {
    return followList(this.backend, this);
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
    return this.loading.run(async () => {
      const seenBefore = this.eventsSeen;
      this.loadError = await attempt(async () => {
        const list = await this.backend.listSSHServers();
        if (this.eventsSeen === seenBefore) this.applyList(list);
      });
    });
  }

  /** Membership and order come from the list; no server goes back in time. */
  applyList(list: SSHServer[]): void {
    this.servers = mergeList(this.servers, list);
    this.loaded = true;
  }

  byId(id: string): SSHServer | undefined {
    return this.servers.find((s) => s.id === id);
  }

  // ---- actions: each rejects with the backend's error ----------------------------------------

  /** Adds (id '') or edits a server. */
  async save(id: string, input: SSHServerInput): Promise<SSHServer> {
    const saved = await this.backend.saveSSHServer(id, input);
    if (id === '' && !this.servers.some((s) => s.id === saved.id)) this.servers = [...this.servers, saved];
    else this.servers = withNewer(this.servers, saved);
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
