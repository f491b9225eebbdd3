// The inbox: one list, across workspaces, of what waits for the person, most urgent first.
// InboxCalls is its call of the table over either transport; the Backend exposes it as
// `backend.inbox`. The list also arrives whole as the event inbox/changed.
import type * as inbox from './gen/inbox';
import type { Call } from './table';

export type InboxKind = inbox.Kind;

/** One thing waiting for the person; '' where it names no pane, goal, fleet or approval. */
export interface InboxItem {
  id: string;
  kind: InboxKind;
  urgency: number;
  title: string;
  detail: string;
  workspaceId: string;
  paneId: string;
  goalId: string;
  fleetId: string;
  taskId: string;
  approvalId: string;
  since: string;
}

export interface InboxApi {
  list(): Promise<InboxItem[]>;
}

const KINDS: readonly InboxKind[] = ['approval', 'task_failed', 'task_blocked', 'review', 'agent_asking', 'agent_idle', 'command_done'];

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The items of a list from the wire (the call's result or the event's data), unknown kinds left out. */
export function normalizeInbox(raw: unknown): InboxItem[] {
  const items = (raw as Partial<inbox.List> | null)?.items;
  if (!Array.isArray(items)) return [];
  return items
    .filter((it): it is inbox.Item => !!it && KINDS.includes((it as inbox.Item).kind))
    .map((it) => ({
      id: str(it.id),
      kind: it.kind,
      urgency: typeof it.urgency === 'number' ? it.urgency : 0,
      title: str(it.title),
      detail: str(it.detail),
      workspaceId: str(it.workspaceId),
      paneId: str(it.paneId),
      goalId: str(it.goalId),
      fleetId: str(it.fleetId),
      taskId: str(it.taskId),
      approvalId: str(it.approvalId),
      since: str(it.since),
    }));
}

/** The inbox's call over a transport's Call. */
export class InboxCalls implements InboxApi {
  constructor(private readonly call: Call) {}
  async list() {
    return normalizeInbox(await this.call('ListInbox', {}));
  }
}
