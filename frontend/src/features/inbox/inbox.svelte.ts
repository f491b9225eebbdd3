import type { Backend, BackendEvent, InboxItem } from '../../lib/api';
import { normalizeInbox } from '../../lib/api';
import { followList } from '../../lib/state/follow';
import { attempt, SharedRead } from '../../lib/state/load';

/** The topic the backend pushes the whole inbox under, as the event "changed". */
export const INBOX_TOPIC = 'inbox';

/** Tells the person of a new item while they look elsewhere; click lands on it. */
export type InboxNotify = (title: string, body: string, onclick: () => void) => void;

/** The inbox order, as the backend sorts it: urgency, then the oldest wait, then the id. */
export function compareItems(a: InboxItem, b: InboxItem): number {
  return a.urgency - b.urgency || (Date.parse(a.since) || 0) - (Date.parse(b.since) || 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * The item one press of the key goes to: the first that comes after the one reached last (which
 * may have left the list since, answered or looked at), else the first.
 */
export function nextAfter(items: readonly InboxItem[], last: InboxItem | null): InboxItem | undefined {
  if (!last) return items[0];
  return items.find((it) => it.id !== last.id && compareItems(it, last) > 0) ?? items[0];
}

/** What waits for the person across workspaces, kept as the backend pushes it. */
export class InboxStore {
  items = $state.raw<InboxItem[]>([]);
  loaded = $state(false);
  loadError = $state('');
  /** The Inbox panel (the status bar's count opens it). */
  open = $state(false);
  /** The item the key or the panel went to last. */
  last: InboxItem | null = null;
  /** Goes to an item: set by the app, which knows the workspaces, panes and dialogs. */
  land: (item: InboxItem) => void = () => {};

  private readonly loading = new SharedRead();

  constructor(
    private readonly backend: Pick<Backend, 'inbox' | 'subscribe' | 'onConnectionChange'>,
    private readonly notify: InboxNotify = () => {},
  ) {}

  sync(): () => void {
    return followList(this.backend, this);
  }

  load(): Promise<void> {
    const api = this.backend.inbox;
    if (!api) return Promise.resolve();
    return this.loading.run(async () => {
      this.loadError = await attempt(async () => this.set(await api.list()));
    });
  }

  handleEvent(e: BackendEvent): void {
    if (e.topic !== INBOX_TOPIC) return;
    if (e.type === 'changed') this.set(normalizeInbox(e.data));
    // The desktop window's notification was clicked (the Go side shows them there).
    if (e.type === 'open') {
      const [item] = normalizeInbox({ items: [e.data] });
      if (item) this.land(item);
    }
  }

  /** The item the key goes to next. */
  next(): InboxItem | undefined {
    return nextAfter(this.items, this.last);
  }

  private set(items: InboxItem[]): void {
    if (this.loaded) {
      const before = new Set(this.items.map((it) => it.id));
      for (const it of items) {
        // An approval has its own notification (the goals'); the rest are told here.
        if (!before.has(it.id) && it.kind !== 'approval') this.notify(it.title, it.detail, () => this.land(it));
      }
    }
    this.items = items;
    this.loaded = true;
  }
}
