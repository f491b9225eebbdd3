import type { Agent, Backend, BackendEvent, Fleet, FleetAction, FleetEvent, FleetOutcome, FleetRunOptions, FleetTask, Goal } from '../api';
import { FLEET_TOPIC, isFinished, normalizeFleetEvent } from '../api';
import { followAndReload } from './follow';
import { attempt, SharedRead } from './load';

/** How long after an event about an unknown fleet the list is read again (shared by a burst). */
export const RELOAD_DELAY_MS = 300;

/**
 * Applies one 'fleets' event to a fleet: a task's status (with its goal, reason and report),
 * or the fleet's. Pure; an event of another fleet, or of a task it lacks, leaves it as it is.
 */
export function foldFleetEvent(f: Fleet, e: FleetEvent): Fleet {
  if (e.fleetId !== f.id) return f;
  if (e.type === 'fleet') return e.status ? { ...f, status: e.status as Fleet['status'], updatedAt: e.at || f.updatedAt } : f;
  const i = f.tasks.findIndex((t) => t.id === e.taskId);
  if (i < 0) return f;
  const t = f.tasks[i];
  const status = (e.status || t.status) as FleetTask['status'];
  const next: FleetTask = {
    ...t,
    status,
    // A task reset to wait (a retry) has no goal, reason or report any more.
    goalId: status === 'waiting' ? undefined : (e.goalId ?? t.goalId),
    reason: status === 'blocked' ? (e.reason ?? t.reason) : undefined,
    report: status === 'waiting' ? undefined : (e.report ?? t.report),
  };
  if (status === 'running' && !t.startedAt) next.startedAt = e.at;
  const tasks = f.tasks.slice();
  tasks[i] = next;
  return { ...f, tasks, updatedAt: e.at || f.updatedAt };
}

/** Tasks by status, for a fleet's one-line summary. */
export function fleetCounts(f: Fleet): Record<FleetTask['status'], number> {
  const n = { waiting: 0, running: 0, completed: 0, failed: 0, aborted: 0, blocked: 0 };
  for (const t of f.tasks) n[t.status]++;
  return n;
}

/** What a task's card shows of its goal: steps, cost, progress through its checklist, what it does now. */
export interface TaskProgress {
  steps: number;
  costUsd: number;
  /** Checklist items done and in all; null when the goal keeps none. */
  todos: { done: number; total: number } | null;
  /** The step it declared, else its open checklist item, else ''. */
  current: string;
  goalStatus?: Goal['status'];
}

export function taskProgress(goal: Goal | undefined): TaskProgress {
  if (!goal) return { steps: 0, costUsd: 0, todos: null, current: '' };
  const todos = goal.state.todos;
  const open = todos.find((t) => !t.done);
  return {
    steps: goal.state.steps,
    costUsd: goal.state.costUsd,
    todos: todos.length ? { done: todos.filter((t) => t.done).length, total: todos.length } : null,
    current: isFinished(goal.status) ? '' : (goal.state.declared?.title ?? open?.text ?? ''),
    goalStatus: goal.status,
  };
}

/** What an agent's card shows of its current task's progress: live from its goal when the
 * goal store has it, else as the agents' list reported it; null when it has no current task. */
export interface AgentCardProgress {
  steps: number;
  maxSteps?: number;
  todos: { done: number; total: number } | null;
  costUsd: number;
  goalStatus?: string;
}

export function agentProgress(agent: Agent, goal: Goal | undefined): AgentCardProgress | null {
  if (!agent.currentTask) return null;
  if (goal && goal.id === agent.currentTask.goalId) {
    const p = taskProgress(goal);
    return { steps: p.steps, maxSteps: agent.progress?.maxSteps, todos: p.todos, costUsd: p.costUsd, goalStatus: p.goalStatus };
  }
  const p = agent.progress;
  if (!p) return { steps: 0, todos: null, costUsd: 0 };
  return {
    steps: p.steps,
    maxSteps: p.maxSteps,
    todos: p.todosTotal ? { done: p.todosDone, total: p.todosTotal } : null,
    costUsd: p.costUsd,
    goalStatus: p.goalStatus,
  };
}

/** How many items of an agent's inbox wait to be delivered. */
export function undelivered(agent: Agent): number {
  return agent.inbox.filter((i) => !i.delivered).length;
}

/** Whether an action can do anything to a task (a bulk button is enabled if it can for one selected). */
export function actionFits(action: FleetAction, task: FleetTask, goalStatus?: Goal['status']): boolean {
  switch (action) {
    case 'pause':
      return task.status === 'running' && goalStatus !== 'paused';
    case 'resume':
      return task.status === 'running' && (goalStatus === 'paused' || goalStatus === 'budget_exceeded' || goalStatus === 'interrupted');
    case 'abort':
      return task.status === 'running' || task.status === 'waiting';
    case 'retry':
      return task.status === 'failed' || task.status === 'aborted' || task.status === 'blocked';
    case 'steer':
      return task.status === 'running' || task.status === 'waiting' || task.status === 'blocked';
  }
}

/**
 * The fleets the Fleet Dashboard shows, kept current from the 'fleets' event topic (a task's
 * goal is followed by the GoalStore, from 'goals'). It also holds the dashboard's own UI
 * state: open, the Composer, the chosen fleet. Actions reject with the backend's error.
 */
export class FleetStore {
  fleets = $state.raw<Fleet[]>([]);
  loaded = $state(false);
  loadError = $state('');
  /** The Fleet Dashboard covers the workspace while open. */
  open = $state(false);
  /** The Composer, over the dashboard. */
  composerOpen = $state(false);
  /** YAML the Composer opens with ("Edit in Composer"); null: a new draft. */
  composerSeed = $state<string | null>(null);
  selectedId = $state<string | null>(null);
  /** Every pane's agent, for the dashboard's agent cards (read once the dashboard asks). */
  agents = $state.raw<Agent[]>([]);
  agentsLoaded = $state(false);
  agentsError = $state('');

  reloadDelayMs = RELOAD_DELAY_MS;
  private reloadTimer: ReturnType<typeof setTimeout> | null = null;
  private agentsTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly loading = new SharedRead();
  private readonly agentsLoading = new SharedRead();
  /** Set by the first loadAgents(): from then on every 'fleets' event reads the agents again. */
  private agentsWanted = false;

  constructor(readonly backend: Backend) {}

  sync(): () => void {
    return followAndReload(
      this,
      () => {
        if (this.agentsWanted) void this.loadAgents();
      },
      () => {
        if (this.reloadTimer) clearTimeout(this.reloadTimer);
        if (this.agentsTimer) clearTimeout(this.agentsTimer);
        this.reloadTimer = this.agentsTimer = null;
      },
    );
  }

  load(): Promise<void> {
    return this.loading.run(async () => {
      this.loadError = await attempt(async () => {
        this.fleets = await this.backend.fleets.list();
        this.loaded = true;
      });
    });
  }

  /** Reads the agents (a call while one is under way shares it). */
  loadAgents(): Promise<void> {
    this.agentsWanted = true;
    return this.agentsLoading.run(async () => {
      this.agentsError = await attempt(async () => {
        this.agents = await this.backend.fleets.agents();
        this.agentsLoaded = true;
      });
    });
  }

  agentOf(paneId: string): Agent | undefined {
    return this.agents.find((a) => a.paneId === paneId);
  }

  /** Gives a pane's agent a role and purpose; rejects with the backend's error (naming the field). */
  async setRole(paneId: string, role: string, purpose: string): Promise<void> {
    const rec = await this.backend.fleets.setRole(paneId, role, purpose);
    this.agents = this.agents.map((a) => (a.paneId === rec.paneId ? { ...a, role: rec.role, purpose: rec.purpose } : a));
    await this.loadAgents();
  }

  byId(id: string | null | undefined): Fleet | undefined {
    return id ? this.fleets.find((f) => f.id === id) : undefined;
  }

  handleEvent(raw: BackendEvent): void {
    if (raw.topic !== FLEET_TOPIC) return;
    // Any change of a task, a fleet or an agent can change an agent's card.
    this.scheduleAgentsReload();
    const e = normalizeFleetEvent(raw.data);
    if (!e.fleetId) return;
    const f = this.byId(e.fleetId);
    if (!f || (e.type === 'task' && !f.tasks.some((t) => t.id === e.taskId))) {
      this.scheduleReload(); // a fleet (or task) made elsewhere: the CLI, assign_task, another window
      return;
    }
    this.put(foldFleetEvent(f, e));
  }

  private scheduleReload(): void {
    if (this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      void this.load();
    }, this.reloadDelayMs);
  }

  private scheduleAgentsReload(): void {
    if (!this.agentsWanted || this.agentsTimer) return;
    this.agentsTimer = setTimeout(() => {
      this.agentsTimer = null;
      void this.loadAgents();
    }, this.reloadDelayMs);
  }

  private put(f: Fleet): void {
    const i = this.fleets.findIndex((x) => x.id === f.id);
    this.fleets = i < 0 ? [f, ...this.fleets] : this.fleets.map((x) => (x.id === f.id ? f : x));
  }

  /** Reads one fleet again (after a control: not every change is an event, and events race). */
  async refresh(id: string): Promise<void> {
    try {
      this.put(await this.backend.fleets.get(id));
    } catch {
      // Best effort: the events keep it current.
    }
  }

  /** Starts a fleet from the Composer's YAML and shows it. */
  async create(yaml: string, run: FleetRunOptions): Promise<Fleet> {
    const f = await this.backend.fleets.create(yaml, run);
    this.put(f);
    this.selectedId = f.id;
    void this.refresh(f.id); // its first tasks started inside the call; their events may have come first
    return f;
  }

  async abort(id: string): Promise<void> {
    this.put(await this.backend.fleets.abort(id));
  }

  async resume(id: string): Promise<void> {
    this.put(await this.backend.fleets.resume(id));
  }

  /** Applies an action to the selected tasks; resolves to each task's outcome. */
  async bulk(id: string, taskIds: string[], action: FleetAction, text = ''): Promise<FleetOutcome[]> {
    const res = await this.backend.fleets.bulk(id, taskIds, action, text);
    this.put(res.fleet);
    setTimeout(() => void this.refresh(id), this.reloadDelayMs); // an abort's end lands just after
    return res.outcomes;
  }
}
