// How the dashboard words and colours goals, steps and events: pure functions, unit-tested,
// so the components only lay them out.
import type { CriterionSpec, Goal, GoalEvent, GoalStatus, Risk, Workspace } from '../../lib/api';
import { isFinished } from '../../lib/api';

// ---- goals -----------------------------------------------------------------------------------

export type GoalFilter = 'all' | 'active' | 'finished';

export const FILTERS: ReadonlyArray<{ id: GoalFilter; label: string }> = [
  { id: 'all', label: 'All' },
  { id: 'active', label: 'Active' },
  { id: 'finished', label: 'Finished' },
];

/** Every status that is not finished: the goal may still act, or waits for the user. */
export function isActive(status: GoalStatus): boolean {
  return !isFinished(status);
}

export function matchesFilter(g: Goal, filter: GoalFilter): boolean {
  if (filter === 'active') return isActive(g.status);
  if (filter === 'finished') return isFinished(g.status);
  return true;
}

/** The goals a filter shows, newest activity first. */
export function filterGoals(goals: readonly Goal[], filter: GoalFilter): Goal[] {
  return goals.filter((g) => matchesFilter(g, filter)).sort(byActivity);
}

/** Newest activity first; ties by id so the order never flickers. */
export function byActivity(a: Goal, b: Goal): number {
  const d = (Date.parse(b.updatedAt) || 0) - (Date.parse(a.updatedAt) || 0);
  return d !== 0 ? d : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Running in the sense of the status bar's count: the model is working or waiting on a person. */
export function isRunning(status: GoalStatus): boolean {
  return status === 'running' || status === 'awaiting_approval';
}

export const STATUS_LABEL: Readonly<Record<GoalStatus, string>> = {
  pending: 'pending',
  running: 'running',
  paused: 'paused',
  awaiting_approval: 'needs approval',
  budget_exceeded: 'over budget',
  interrupted: 'interrupted',
  completed: 'completed',
  failed: 'failed',
  aborted: 'aborted',
};

/** What each ceiling lets the agent do without asking, in one sentence each (the New Goal form). */
export const RISK_SENTENCE: Readonly<Record<Risk, string>> = {
  read_only: 'Only looks: reads terminals and pages; anything that changes something asks you first.',
  write_local: 'Works on this machine: types commands and writes files (inside the sandbox, if set); network access asks you.',
  network_get: 'Also browses: opens and reads web pages; submitting forms or posting asks you.',
  network_write: 'Also acts on the web: clicks, types and submits on pages; anything that spends money asks you.',
  spends_money: 'Everything, including purchases and payments. Only for goals you trust completely.',
};

/** "Workspace 1 / Terminal 2" for a pane of any workspace, else the bare id. */
export function paneLabel(workspaces: readonly Workspace[], paneId: string): string {
  for (const ws of workspaces) {
    const p = ws.panes.find((x) => x.id === paneId);
    if (p) return `${ws.name} / ${p.label}`;
  }
  return paneId;
}

/** The success criterion in words, as the backend describes it to the model. */
export function describeCriterion(c: CriterionSpec, pane: (id: string) => string = (id) => id): string {
  switch (c.kind) {
    case 'shell': {
      const timeout = c.timeout ? ` (timeout ${durationText(c.timeout)})` : '';
      return `the shell command \`${c.command ?? ''}\` exits with code ${c.exitCode ?? 0}${timeout}`;
    }
    case 'model_question':
      return c.threshold === 'high_confidence'
        ? `two independent judge models (the second looking for reasons the claim is false) both answer YES to: "${c.question ?? ''}"`
        : `a judge model answers YES to: "${c.question ?? ''}"`;
    case 'json_predicate': {
      const expr = `the expression \`${c.expr ?? ''}\` is true of`;
      const source = c.source ?? '';
      if (source.startsWith('file:')) return `${expr} the JSON in the file ${source.slice(5)}`;
      if (source.startsWith('command:')) return `${expr} the JSON printed by the command \`${source.slice(8)}\``;
      return `${expr} the claim's rationale, which must be a JSON document`;
    }
    case 'visual':
      return `a vision model looking at pane ${pane(c.paneId ?? '')} answers YES to: "${c.question ?? ''}"`;
    case 'manual':
      return "a person reviews the result: the model's claim is accepted, and you can re-open the goal with feedback";
  }
  return `an unknown criterion (${String((c as { kind?: unknown }).kind)})`;
}

/** Go's "1h0m0s" / "90s", or a number of seconds, shortened for people ("1h", "90s"). */
export function durationText(d: string | number): string {
  if (typeof d === 'number') return `${d}s`;
  return d.replace(/(\d)h0m0s$/, '$1h').replace(/(\d)m0s$/, '$1m').replace(/^0s$/, '0s');
}

// ---- times and amounts -----------------------------------------------------------------------

/** "just now", "42s ago", "5m ago", "3h ago", "2d ago"; '' for a missing time. */
export function relativeTime(iso: string | undefined, now: number): string {
  const t = Date.parse(iso ?? '');
  if (Number.isNaN(t)) return '';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 5) return 'just now';
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** A span of time: "850 ms", "12.3 s", "2m 05s", "1h 02m". */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * The active time a goal has used, now. The backend reports it as of its last save; while the
 * goal runs its clock goes on, so it is counted on from `since` (when that figure was saved, on
 * this page's clock). A first run not yet saved counts from its start.
 */
export function elapsedNow(goal: Pick<Goal, 'status' | 'state' | 'startedAt'>, since: number, now: number): number {
  const ms = goal.state.elapsedMs;
  if (goal.status !== 'running') return ms;
  const counted = ms + Math.max(0, now - since);
  const sinceStart = ms === 0 ? now - Date.parse(goal.startedAt ?? '') : 0;
  return Math.max(counted, Number.isFinite(sinceStart) ? sinceStart : 0);
}

/**
 * When a goal's reported time was saved, on this page's clock: its updatedAt unless that is
 * missing, far off or ahead of `now` (another machine's clock), else `now`.
 */
export function savedAt(updatedAt: string, now: number): number {
  const t = Date.parse(updatedAt);
  return Number.isFinite(t) && t > now - 3_600_000 ? Math.min(t, now) : now;
}

/** Time since the goal started, for a step: "+1m 05s". */
export function offsetText(startedAt: string | undefined, at: string): string {
  const a = Date.parse(startedAt ?? '');
  const b = Date.parse(at);
  if (Number.isNaN(a) || Number.isNaN(b)) return '';
  return `+${formatMs(Math.max(0, b - a))}`;
}

export function usd(v: number): string {
  if (!v) return '$0';
  return v < 0.01 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;
}

export function tokenCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A turn's input split into what the prompt cache served and what it did not: "in 2.2k (1.9k cached) · out 11". */
export function inputSplit(u: { inputTokens: number; outputTokens: number; cachedInputTokens?: number; cacheWriteTokens?: number }): string {
  const cached = u.cachedInputTokens ?? 0;
  const written = u.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, u.inputTokens - cached - written);
  const parts = [`${tokenCount(uncached)} uncached`];
  if (cached) parts.push(`${tokenCount(cached)} cached`);
  if (written) parts.push(`${tokenCount(written)} written to cache`);
  return `in ${parts.join(' + ')} · out ${tokenCount(u.outputTokens)}`;
}

// ---- steps -----------------------------------------------------------------------------------

export type ToolFamily = 'terminal' | 'browser' | 'goal' | 'other';

/** The goal tools of backend/tools/goal.go: they steer the goal itself. */
export const GOAL_TOOLS: readonly string[] = [
  'claim_complete',
  'abort_with_report',
  'write_todos',
  'complete_todo',
  'declare_step',
  'verify_step',
];

/** The family a tool's name belongs to, which colours it in the step log. */
export function toolFamily(name: string): ToolFamily {
  if (GOAL_TOOLS.includes(name)) return 'goal';
  if (name.startsWith('browser_')) return 'browser';
  if (name.startsWith('terminal_') || name.includes('_terminal') || name === 'wait_for_output') return 'terminal';
  return 'other';
}

/** Text collapsed to one line and cut to max characters. */
export function oneLine(s: string, max = 160): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** Arguments as indented JSON (a JSON string is parsed first). */
export function prettyArgs(args: unknown): string {
  try {
    return JSON.stringify(typeof args === 'string' ? JSON.parse(args) : args, null, 2) ?? '';
  } catch {
    return String(args);
  }
}

/** What a pane's badge says the goal is doing, in a few words. */
export function currentActivity(status: GoalStatus, last: { tool: string; preview: string } | undefined): string {
  if (status === 'awaiting_approval') return 'waiting for your approval';
  if (status === 'paused') return 'paused';
  if (status === 'pending') return 'queued';
  if (status === 'budget_exceeded') return 'over budget';
  if (status === 'interrupted') return 'interrupted: resume it';
  if (!last) return 'starting';
  return oneLine(`${last.tool} ${last.preview}`, 48);
}

// ---- the critic & verification rail -----------------------------------------------------------

/** The colour a rail entry takes. */
export type Tone = 'progressing' | 'stuck' | 'achieved' | 'misled' | 'ok' | 'fail' | 'warn' | 'info';

export interface RailEntry {
  seq: number;
  at: string;
  type: string;
  tone: Tone;
  title: string;
  detail: string;
}

const VERDICT_TONE: Record<string, Tone> = {
  PROGRESSING: 'progressing',
  STUCK: 'stuck',
  ACHIEVED: 'achieved',
  MISLED: 'misled',
};

const ANSWER_WORDS: Record<string, string> = {
  allow_once: 'allowed once',
  allow_goal: 'allowed for this goal',
  deny: 'denied',
};

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v));

/**
 * One rail entry per event worth showing beside the step log, or null for events the log
 * already shows (steps) or that carry nothing to read (streamed text).
 */
export function railEntry(e: GoalEvent): RailEntry | null {
  const d = e.data ?? {};
  const base = { seq: e.seq, at: e.at, type: e.type };
  switch (e.type) {
    case 'critic': {
      if (d.error) return { ...base, tone: 'warn', title: 'critic could not be asked', detail: str(d.error) };
      const verdict = str(d.verdict).toUpperCase();
      return { ...base, tone: VERDICT_TONE[verdict] ?? 'info', title: `critic: ${verdict || '?'}`, detail: str(d.reason) };
    }
    case 'guard':
      return { ...base, tone: 'warn', title: `loop guard: ${str(d.action)}${d.rule ? ` (${str(d.rule)})` : ''}`, detail: str(d.message) };
    case 'verification_failed': {
      const bounce = d.bounces ? ` (${str(d.bounces)}/${str(d.budget)})` : '';
      const gate = d.gate === 'finalize_critic' ? 'finalize critic' : 'verification';
      return { ...base, tone: 'fail', title: `${gate} failed${bounce}`, detail: str(d.detail) };
    }
    case 'verification_passed':
      return { ...base, tone: 'ok', title: 'verification passed', detail: str(d.detail) };
    case 'approval_requested':
      return { ...base, tone: 'warn', title: `approval asked: ${str(d.tool)}`, detail: str(d.reason) };
    case 'approval_resolved': {
      const answer = ANSWER_WORDS[str(d.status)] ?? str(d.status);
      return { ...base, tone: d.status === 'deny' ? 'fail' : 'ok', title: `${answer}: ${str(d.tool)}`, detail: str(d.answerReason) };
    }
    case 'paused':
      return { ...base, tone: 'info', title: 'paused', detail: '' };
    case 'resumed':
      return { ...base, tone: 'info', title: 'resumed', detail: str(d.message) };
    case 'steered':
      return { ...base, tone: 'info', title: 'you steered', detail: str(d.text) };
    case 'started':
      return { ...base, tone: 'info', title: 'started', detail: d.model ? `model ${str(d.model)}` : '' };
    case 'ended':
      return { ...base, tone: d.status === 'completed' ? 'ok' : 'fail', title: `ended: ${str(d.status)}`, detail: '' };
    case 'status':
      return { ...base, tone: d.status === 'interrupted' || d.status === 'budget_exceeded' ? 'warn' : 'info', title: `status: ${str(d.status)}`, detail: str(d.message) };
    case 'compaction':
      return {
        ...base,
        tone: 'info',
        title: `context compacted (${str(d.count)})`,
        detail: `older steps summarised to fit the model's window: about ${tokenCount(Number(d.tokensBefore) || 0)} → ${tokenCount(Number(d.tokensAfter) || 0)} tokens`,
      };
    case 'notice':
      if (Array.isArray(d.todos)) return { ...base, tone: 'info', title: 'checklist updated', detail: `${d.todos.length} items` };
      return { ...base, tone: 'info', title: 'notice', detail: str(d.message) };
  }
  return null;
}

export function railEntries(events: readonly GoalEvent[]): RailEntry[] {
  const out: RailEntry[] = [];
  for (const e of events) {
    const r = railEntry(e);
    if (r) out.push(r);
  }
  return out;
}

/** Pane ids as the backend makes them (workspace.NewPaneID). */
const PANE_ID = /\bpane-[0-9a-f]{12}\b/g;

/** Names the panes a text mentions by their titles ("Terminal 2.1") instead of raw ids. */
export function namePanes(text: string, names: ReadonlyMap<string, string>): string {
  return text.replace(PANE_ID, (id) => names.get(id) ?? id);
}

/** The pane a tool call works in (its pane_id argument), if any. */
export function stepPane(args: unknown): string {
  try {
    const a = typeof args === 'string' ? JSON.parse(args) : args;
    return a && typeof a === 'object' && typeof (a as { pane_id?: unknown }).pane_id === 'string' ? (a as { pane_id: string }).pane_id : '';
  } catch {
    return '';
  }
}
