import type {
  ApprovalAnswer,
  Backend,
  BackendEvent,
  Goal,
  GoalApproval,
  GoalEvent,
  GoalSpec,
  StartGoalOptions,
  ToolDefinition,
} from '../api';
import { errorMessage, GOAL_TOPIC, isFinished, normalizeGoalEvent } from '../api';
import { desktopNotify, type Notify } from './desktopNotify';
import { followAndReload } from './follow';
import {
  approvalFromEvent,
  foldEvent,
  lastStepFromEvent,
  placeholderGoal,
  withdrawsApprovals,
  type LastStep,
} from './goalEvents';
import { GoalTimeline } from './goalTimeline.svelte';
import { SharedRead } from './load';

/**
 * How long after a goal's event its row is read again (tokens and cost travel in no event).
 * Events in between share the read, so a busy goal is read at most about twice a second.
 */
export const REFRESH_DELAY_MS = 400;

/** Newest activity first, as the backend lists them. */
function byActivity(a: Goal, b: Goal): number {
  return (Date.parse(b.updatedAt) || 0) - (Date.parse(a.updatedAt) || 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * The goals the dashboard, the pane badges, the status bar and the approval modal show, kept
 * current from the 'goals' event topic: each event is folded into its goal at once, and the
 * goal is read again shortly after for what events do not carry. A read that raced events is
 * corrected by folding those events again over it, so the UI never goes back in time.
 *
 * Actions reject with the backend's error, for the component that asked to show next to the
 * control; nothing is swallowed.
 */
export class GoalStore {
  goals = $state.raw<Goal[]>([]);
  /** True once a list has arrived. */
  loaded = $state(false);
  /** Why the last list read failed; '' after a success. */
  loadError = $state('');
  /** Approval requests waiting for the user, oldest first. */
  approvals = $state.raw<GoalApproval[]>([]);
  /** Goal id → what it last did, for pane badges. */
  lastSteps = $state.raw<Record<string, LastStep>>({});
  /** Approval ids the user put off ("Later"); they come back when the user opens their goal. */
  deferred = $state.raw<string[]>([]);
  /** The approvals the modal asks about now. */
  readonly asking = $derived(this.approvals.filter((a) => !this.deferred.includes(a.id)));

  /** Goals the status bar counts as running. */
  readonly runningCount = $derived(this.goals.filter((g) => g.status === 'running' || g.status === 'awaiting_approval').length);

  /** Tunable for tests. */
  refreshDelayMs = REFRESH_DELAY_MS;

  private readonly timelines = new Map<string, GoalTimeline>();
  private readonly refreshTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Events received while reads are in flight, numbered, to fold again over what the reads return. */
  private received = 0;
  private inFlight = 0;
  private recent: Array<{ n: number; e: GoalEvent }> = [];
  private readonly loading = new SharedRead();
  private tools: Promise<ToolDefinition[]> | null = null;

  constructor(
    readonly backend: Backend,
    readonly report: (message: string) => void,
    private readonly notify: Notify = desktopNotify,
  ) {}

  /**
   * Follows the backend's goal events, and reads everything again whenever the live connection
   * (re)opens: events sent while it was down are gone. Returns the stop function.
   */
  sync(): () => void {
    return followAndReload(
      this,
      () => {
        for (const t of this.timelines.values()) void t.catchUp();
      },
      () => {
        for (const t of this.refreshTimers.values()) clearTimeout(t);
        this.refreshTimers.clear();
      },
    );
  }

  // ---- reading ---------------------------------------------------------------------------------

  /** Reads the goals and the pending approvals. Concurrent calls share one read. */
  load(): Promise<void> {
    return this.loading.run(() => this.doLoad());
  }

  private async doLoad(): Promise<void> {
    await this.tracked(async (refold) => {
      try {
        const [goals, approvals] = await Promise.all([this.backend.goals.list(), this.backend.goals.pendingApprovals()]);
        this.goals = goals.slice().sort(byActivity);
        this.approvals = approvals;
        this.loaded = true;
        this.loadError = '';
        refold(() => true);
        void this.readLastSteps();
      } catch (err) {
        this.loadError = errorMessage(err);
      }
    });
  }

  /** The last step of each active goal that has none yet, for the pane badges (best effort). */
  private async readLastSteps(): Promise<void> {
    for (const g of this.goals) {
      if (isFinished(g.status) || g.state.steps === 0 || this.lastSteps[g.id]) continue;
      try {
        const [s] = await this.backend.goals.steps(g.id, g.state.steps - 1, 1);
        if (s && !this.lastSteps[g.id]) this.lastSteps = { ...this.lastSteps, [g.id]: { tool: s.tool, preview: s.result, isError: s.isError } };
      } catch {
        // Best effort: the badge says "running" without the step.
      }
    }
  }

  /** Reads one goal again and puts it in the list. */
  async refresh(id: string): Promise<void> {
    await this.tracked(async (refold) => {
      try {
        const g = await this.backend.goals.get(id);
        this.put(g);
        refold((e) => e.goalId === id);
      } catch (err) {
        // A goal deleted meanwhile (by another window, or a prune) leaves the list.
        if ((err as { status?: number }).status === 404) this.drop(id);
      }
    });
  }

  /**
   * Runs a read, then lets it fold again the events that arrived while it was in flight (those
   * the read may or may not reflect; folding is idempotent, so both are right).
   */
  private async tracked(read: (refold: (which: (e: GoalEvent) => boolean) => void) => Promise<void>): Promise<void> {
    const from = this.received;
    this.inFlight++;
    try {
      await read((which) => {
        for (const { n, e } of this.recent) if (n > from && which(e)) this.fold(e, false);
      });
    } finally {
      if (--this.inFlight === 0) this.recent = [];
    }
  }

  /** The story of one goal, read once and kept current. */
  timeline(id: string): GoalTimeline {
    let t = this.timelines.get(id);
    if (!t) {
      t = new GoalTimeline(this.backend.goals, id);
      this.timelines.set(id, t);
      void t.catchUp();
    }
    return t;
  }

  /** The tool registry, for the New Goal form's allow and deny lists (read once). */
  toolList(): Promise<ToolDefinition[]> {
    this.tools ??= this.backend.goals.tools().catch((err) => {
      this.tools = null;
      throw err;
    });
    return this.tools;
  }

  byId(id: string | null | undefined): Goal | undefined {
    return id ? this.goals.find((g) => g.id === id) : undefined;
  }

  /** The newest goal working in a pane that has not finished. */
  activeForPane(paneId: string): Goal | undefined {
    return this.goals.find((g) => g.spec.paneId === paneId && !isFinished(g.status));
  }

  // ---- events --------------------------------------------------------------------------------

  handleEvent(raw: BackendEvent): void {
    if (raw.topic !== GOAL_TOPIC) return;
    const e = normalizeGoalEvent(raw.data);
    if (!e.goalId) return;
    if (e.type === 'delta') {
      this.timelines.get(e.goalId)?.receive(e);
      return;
    }
    this.received++;
    if (this.inFlight > 0) this.recent.push({ n: this.received, e });
    this.fold(e, true);
    this.timelines.get(e.goalId)?.receive(e);
    this.scheduleRefresh(e.goalId);
  }

  /** Applies one stored event; `live` is false when it is folded again after a read. */
  private fold(e: GoalEvent, live: boolean): void {
    const held = this.byId(e.goalId);
    if (held) this.put(foldEvent(held, e));
    else if (this.loaded) this.put(foldEvent(placeholderGoal(e.goalId), e)); // the refresh fills it in

    const last = lastStepFromEvent(e);
    if (last) this.lastSteps = { ...this.lastSteps, [e.goalId]: last };

    if (e.type === 'approval_requested') {
      const a = approvalFromEvent(e);
      if (a && a.status === 'pending' && !this.approvals.some((x) => x.id === a.id)) {
        this.approvals = [...this.approvals, a];
        if (live) this.notify('A goal needs your approval', `${a.tool}: ${this.byId(e.goalId)?.spec.goal ?? ''}`);
      }
    } else if (e.type === 'approval_resolved') {
      const a = approvalFromEvent(e);
      if (a) this.approvals = this.approvals.filter((x) => x.id !== a.id);
    }
    if (withdrawsApprovals(e)) this.approvals = this.approvals.filter((x) => x.goalId !== e.goalId);

    if (live && e.type === 'ended' && typeof e.data.status === 'string' && isFinished(e.data.status as Goal['status'])) {
      this.notify(`Goal ${e.data.status}`, this.byId(e.goalId)?.spec.goal ?? '');
    }
  }

  private scheduleRefresh(id: string): void {
    if (this.refreshTimers.has(id)) return;
    this.refreshTimers.set(
      id,
      setTimeout(() => {
        this.refreshTimers.delete(id);
        void this.refresh(id);
      }, this.refreshDelayMs),
    );
  }

  /** Replaces (or adds) a goal, keeping the list in activity order. */
  private put(g: Goal): void {
    const rest = this.goals.filter((x) => x.id !== g.id);
    this.goals = [...rest, g].sort(byActivity);
  }

  private drop(id: string): void {
    this.goals = this.goals.filter((g) => g.id !== id);
    this.approvals = this.approvals.filter((a) => a.goalId !== id);
    this.timelines.delete(id);
    if (this.lastSteps[id]) {
      const { [id]: _gone, ...rest } = this.lastSteps;
      this.lastSteps = rest;
    }
  }

  // ---- actions: each rejects with the backend's error ------------------------------------------

  /** Starts a goal; its events may arrive before the answer, so they are folded over it. */
  async start(spec: GoalSpec, opts?: StartGoalOptions): Promise<Goal> {
    let started: Goal | undefined;
    await this.tracked(async (refold) => {
      started = await this.backend.goals.start(spec, ...(opts ? [opts] : []));
      this.put(started);
      refold((e) => e.goalId === started?.id);
    });
    return this.byId(started!.id) ?? started!;
  }

  /** Runs a control, then reads the goal and its story again (not every change is announced live). */
  private async control(id: string, act: () => Promise<unknown>): Promise<void> {
    await act();
    await this.refresh(id);
    await this.timelines.get(id)?.catchUp();
  }

  pause(id: string): Promise<void> {
    return this.control(id, () => this.backend.goals.pause(id));
  }
  resume(id: string): Promise<void> {
    return this.control(id, () => this.backend.goals.resume(id));
  }
  abort(id: string): Promise<void> {
    return this.control(id, () => this.backend.goals.abort(id));
  }
  steer(id: string, text: string): Promise<void> {
    return this.control(id, () => this.backend.goals.steer(id, text));
  }
  reopen(id: string, feedback: string): Promise<void> {
    return this.control(id, () => this.backend.goals.reopen(id, feedback));
  }
  raiseBudget(id: string, usd: number, tokens: number): Promise<void> {
    return this.control(id, () => this.backend.goals.raiseBudget(id, usd, tokens));
  }

  async remove(id: string): Promise<void> {
    await this.backend.goals.remove(id);
    this.drop(id);
  }

  /** Deletes every finished goal; resolves to how many. */
  async prune(): Promise<number> {
    const n = await this.backend.goals.prune();
    for (const g of this.goals) if (isFinished(g.status)) this.drop(g.id);
    await this.load();
    return n;
  }

  /** Hides a request from the modal; its goal keeps waiting. */
  defer(approvalId: string): void {
    if (!this.deferred.includes(approvalId)) this.deferred = [...this.deferred, approvalId];
  }

  /** Asks again about the requests of a goal that were put off. */
  recall(goalId: string): void {
    this.deferred = this.deferred.filter((id) => this.approvals.find((a) => a.id === id)?.goalId !== goalId);
  }

  async answerApproval(id: string, answer: ApprovalAnswer, reason: string): Promise<void> {
    try {
      await this.backend.goals.answerApproval(id, answer, reason);
    } catch (err) {
      // A request that stopped waiting (its goal paused or ended) leaves the queue; the
      // error still reaches the card that asked.
      void this.load();
      throw err;
    }
    this.approvals = this.approvals.filter((a) => a.id !== id);
  }
}
