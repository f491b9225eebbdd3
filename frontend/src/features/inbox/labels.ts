import type { InboxKind } from '../../lib/api';

/** What each kind of item is called in the panel, shortest first. */
export const KIND_LABEL: Record<InboxKind, string> = {
  approval: 'Approval',
  task_failed: 'Failed',
  task_blocked: 'Blocked',
  review: 'Ready to land',
  agent_asking: 'Asking',
  agent_idle: 'Idle',
  command_done: 'Finished',
};

/** How long ago, in the panel's few characters: "now", "4m", "2h", "3d". */
export function ago(since: string, now = Date.now()): string {
  const t = Date.parse(since);
  if (!t) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return 'now';
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
