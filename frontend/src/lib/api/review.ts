// Review and land: a task's or goal's branch as a diff, the person's comments on it, sending
// them back to its agent, and landing the work on its target branch. ReviewCalls are their
// calls of the table over either transport; the Backend exposes them as `backend.review`.
//
// A ref names the work: FLEET_ID/TASK_ID for a fleet task, a goal id for a goal run in its own
// worktree, and a fleet id for landing a whole fleet.
import type * as land from './gen/land';
import type * as review from './gen/review';
import { normalizeStep, type GoalStep } from './goals';
import type { Call } from './table';

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed';

/** One changed file of a branch against its base. */
export interface ChangedFile {
  path: string;
  oldPath?: string;
  status: ChangeStatus;
  added: number;
  removed: number;
  binary?: boolean;
}

/** A page of a branch's changes: every file, and the unified diff (git's format) of some. */
export interface ChangesPage {
  ref: string;
  kind: 'task' | 'goal';
  branch: string;
  base: string;
  target?: string;
  tip?: string;
  /** The worktree holds work not committed yet; the page shows the branch's commits only. */
  uncommitted?: boolean;
  /** What the person should know of the page (the uncommitted work, say). */
  note?: string;
  files: ChangedFile[];
  patch: string;
  offset: number;
  /** Where the next page starts; 0 when there is none. */
  nextOffset: number;
  /** A file's patch was cut short (too large to show whole); truncatedFiles says which. */
  truncated: boolean;
  truncatedFiles: string[];
}

export type CommentSide = 'new' | 'old';

/** A review comment; file '' and line 0 is one on the whole change. */
export interface ReviewComment {
  id: string;
  ref: string;
  file: string;
  line: number;
  side: CommentSide;
  body: string;
  createdAt: string;
  /** When it went to the agent with SendReview; absent while pending. */
  sentAt?: string;
}

export interface NewReviewComment {
  ref: string;
  file: string;
  line: number;
  side: CommentSide;
  body: string;
}

export interface SendReviewResult {
  /** The work that was reopened ('' when it was not). */
  reopened: string;
  feedback: string;
}

export type LandStrategy = 'rebase' | 'merge';
export type OnRefuse = 'agent' | 'person';
export type LandOutcomeStatus = 'landed' | 'refused' | 'skipped' | 'already';

export interface LandOutcome {
  ref: string;
  taskId?: string;
  status: LandOutcomeStatus;
  commit?: string;
  detail?: string;
  sentBack?: boolean;
}

export interface LandResult {
  outcomes: LandOutcome[];
  /** What to do next: a checkout of the target left behind, a task waiting for `fleet resume`. */
  note?: string;
}

/** The choice remembered for a repository, used when a Land names none. */
export interface LandPrefs {
  repo: string;
  strategy: LandStrategy | '';
  check?: string;
  onRefuse?: OnRefuse | '';
  /** The fleet file's land: check:, which wins over the remembered check. */
  fileCheck?: string;
}

export interface LandOptions {
  strategy?: LandStrategy;
  onRefuse?: OnRefuse;
  /** The repository's own check, run on the result before the target moves; remembered. */
  check?: string;
}

export interface ReviewApi {
  /** A page of the work's changes; with `file`, that file's diff alone. */
  changes(ref: string, opts?: { file?: string; offset?: number; limit?: number }): Promise<ChangesPage>;
  comments(ref: string): Promise<ReviewComment[]>;
  addComment(c: NewReviewComment): Promise<ReviewComment>;
  deleteComment(id: string): Promise<void>;
  /** Sends the pending comments (and the note) to the agent, reopening its work. */
  send(ref: string, note: string): Promise<SendReviewResult>;
  /** Lands a task's or goal's work, or with a fleet id every verified task of the fleet. */
  land(ref: string, opts?: LandOptions): Promise<LandResult>;
  landPrefs(ref: string): Promise<LandPrefs>;
  /** The step log of the goal that did the work (its first 500 steps). */
  steps(goalId: string): Promise<GoalStep[]>;
}

const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

function pageOf(raw: unknown): ChangesPage {
  const p = (raw ?? {}) as Partial<ChangesPage>;
  return {
    ref: String(p.ref ?? ''),
    kind: p.kind === 'goal' ? 'goal' : 'task',
    branch: String(p.branch ?? ''),
    base: String(p.base ?? ''),
    target: p.target || undefined,
    tip: p.tip || undefined,
    uncommitted: p.uncommitted === true,
    note: p.note || undefined,
    files: arr<ChangedFile>(p.files),
    patch: String(p.patch ?? ''),
    offset: p.offset ?? 0,
    nextOffset: p.nextOffset ?? 0,
    truncated: p.truncated === true,
    truncatedFiles: arr<string>(p.truncatedFiles),
  };
}

/** The review's and landing's calls over a transport's Call. */
export class ReviewCalls implements ReviewApi {
  constructor(private readonly call: Call) {}
  async changes(ref: string, opts: { file?: string; offset?: number; limit?: number } = {}) {
    return pageOf(await this.call('GetChanges', { ref, ...opts }));
  }
  async comments(ref: string) {
    return arr<ReviewComment>((await this.call('ListReviewComments', { ref }))?.comments);
  }
  async addComment(c: NewReviewComment) {
    return (await this.call('AddReviewComment', c)) as ReviewComment;
  }
  async deleteComment(id: string) {
    await this.call('DeleteReviewComment', { id });
  }
  async send(ref: string, note: string) {
    const r: Partial<review.Sent> = (await this.call('SendReview', { ref, note })) ?? {};
    return { reopened: typeof r.reopened === 'string' ? r.reopened : '', feedback: String(r.feedback ?? '') };
  }
  async land(ref: string, opts: LandOptions = {}) {
    const r: Partial<land.Report> = (await this.call('Land', { ref, ...opts })) ?? {};
    return { outcomes: arr<LandOutcome>(r.outcomes), ...(r.note ? { note: String(r.note) } : {}) };
  }
  async steps(goalId: string) {
    return (await this.call('GoalSteps', { id: goalId, after: 0, limit: 500 })).steps.map(normalizeStep);
  }
  async landPrefs(ref: string): Promise<LandPrefs> {
    const r: Partial<land.Prefs> = (await this.call('GetLandPrefs', { ref })) ?? {};
    return {
      repo: String(r.repo ?? ''),
      strategy: r.strategy === 'merge' || r.strategy === 'rebase' ? r.strategy : '',
      check: r.check,
      onRefuse: r.onRefuse === 'agent' || r.onRefuse === 'person' ? r.onRefuse : '',
      ...(r.fileCheck ? { fileCheck: String(r.fileCheck) } : {}),
    };
  }
}
