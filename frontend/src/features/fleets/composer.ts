// The Fleet Composer as pure functions: a draft of strings, the YAML it saves (the file
// format `fleet run` reads), a draft from a parsed file, the mistakes found before sending,
// and where the server's refusal belongs. The components only wire these up.
import type { FleetErrorPlace, FleetFile, FleetRunOptions, FleetTaskSpec, RenderedTask, Risk } from '../../lib/api';
import { findCycle } from './graph';

/** How a task's success is checked; 'judge' is the default strict judge question. */
export type CheckKind = 'judge' | 'shell' | 'question' | 'json' | 'visual' | 'manual';

export const CHECK_KINDS: ReadonlyArray<{ kind: CheckKind; label: string; key?: string }> = [
  { kind: 'judge', label: 'Judge (default)' },
  { kind: 'shell', label: 'Shell command', key: 'check_shell' },
  { kind: 'question', label: 'Model question', key: 'check_question' },
  { kind: 'json', label: 'JSON predicate', key: 'check_json' },
  { kind: 'visual', label: 'Visual', key: 'check_visual' },
  { kind: 'manual', label: 'Manual', key: 'check_manual' },
];

/** The roles the dashboard knows; any other text is a role of the user's own. */
export const ROLES = ['Builder', 'Monitor', 'Tester', 'Deployer', 'Reviewer', 'General'] as const;

/** The server's default judge question (backend/fleet/file.go DefaultCriterion). */
const JUDGE_PREFIX = 'Judging strictly by the evidence, was this task achieved? TASK: ';

export interface TaskDraft {
  /** Stable across edits of the id, for Svelte's keyed lists and error places. */
  key: number;
  id: string;
  goal: string;
  /** '' = the default, <id>-term, made when the fleet starts. */
  pane: string;
  role: string;
  /** A persona id of the catalog; '' none. */
  persona: string;
  /** A pane launch template id the pane starts as when the fleet makes it; '' the shell. */
  template: string;
  /** Kept from a loaded file (no input of their own): isolation and ssh. */
  isolation: string;
  ssh: string;
  priority: string;
  dependsOn: string[];
  check: CheckKind;
  /** The check's text: command, question, predicate or visual question. */
  checkText: string;
  exitCode: string;
  /** Seconds, or a duration such as "2m". */
  timeout: string;
  threshold: '' | 'yes' | 'high_confidence';
  jsonSource: string;
  visualPane: string;
}

export interface ComposerDraft {
  name: string;
  concurrency: string;
  risk: Risk;
  sandboxDir: string;
  /** Kept from a loaded file (no input of their own): the fleet's isolation and setup. */
  isolation: string;
  setup: string;
  tasks: TaskDraft[];
}

let nextKey = 1;

export function newTask(existing: readonly TaskDraft[] = []): TaskDraft {
  let n = existing.length + 1;
  while (existing.some((t) => t.id === `task-${n}`)) n++;
  return {
    key: nextKey++,
    id: `task-${n}`,
    goal: '',
    pane: '',
    role: '',
    persona: '',
    template: '',
    isolation: '',
    ssh: '',
    priority: '',
    dependsOn: [],
    check: 'judge',
    checkText: '',
    exitCode: '',
    timeout: '',
    threshold: '',
    jsonSource: '',
    visualPane: '',
  };
}

export function emptyComposer(): ComposerDraft {
  return { name: '', concurrency: '', risk: 'write_local', sandboxDir: '', isolation: '', setup: '', tasks: [newTask()] };
}

/** Renames a task, and every depends_on that names it. */
export function renameTask(d: ComposerDraft, key: number, id: string): void {
  const t = d.tasks.find((x) => x.key === key);
  if (!t) return;
  const old = t.id;
  t.id = id;
  for (const o of d.tasks) o.dependsOn = o.dependsOn.map((x) => (x === old ? id : x));
}

/** "From template": a rendered task template fills the task's goal, its check (a question for the judge) and its persona. */
export function applyRendered(t: TaskDraft, r: RenderedTask): void {
  t.goal = r.goal;
  t.check = 'question';
  t.checkText = r.criterion;
  t.threshold = '';
  if (r.persona) t.persona = r.persona;
}

/** Removes a task, and the dependencies on it. */
export function removeTask(d: ComposerDraft, key: number): void {
  const t = d.tasks.find((x) => x.key === key);
  d.tasks = d.tasks.filter((x) => x.key !== key);
  if (t) for (const o of d.tasks) o.dependsOn = o.dependsOn.filter((x) => x !== t.id);
}

// ---- YAML out ---------------------------------------------------------------------------------

const PLAIN = /^[A-Za-z_/.][A-Za-z0-9 _./()+,-]*$/;
const RESERVED = /^(true|false|yes|no|on|off|null|~|y|n)$/i;

/** A YAML scalar: plain when that reads back as the same text, else double-quoted (JSON's escapes are YAML's). */
export function yamlString(s: string): string {
  if (s !== '' && PLAIN.test(s) && !RESERVED.test(s) && s.trim() === s && !s.includes(' #') && !s.includes(': ')) return s;
  return JSON.stringify(s);
}

/** The criterion keys of a task, as the fleet file writes them. */
function checkKeys(t: TaskDraft): Array<[string, string]> {
  const text = yamlString(t.checkText.trim());
  const out: Array<[string, string]> = [];
  switch (t.check) {
    case 'judge':
      return out;
    case 'shell':
      out.push(['check_shell', text]);
      if (t.exitCode.trim() && t.exitCode.trim() !== '0') out.push(['exit_code', t.exitCode.trim()]);
      break;
    case 'question':
      out.push(['check_question', text]);
      if (t.threshold) out.push(['threshold', t.threshold]);
      break;
    case 'json':
      out.push(['check_json', text]);
      if (t.jsonSource.trim()) out.push(['json_source', yamlString(t.jsonSource.trim())]);
      break;
    case 'visual':
      out.push(['check_visual', text]);
      if (t.visualPane.trim()) out.push(['visual_pane', yamlString(t.visualPane.trim())]);
      break;
    case 'manual':
      out.push(['check_manual', 'true']);
      break;
  }
  if ((t.check === 'shell' || t.check === 'json') && t.timeout.trim()) out.push(['check_timeout', yamlString(t.timeout.trim())]);
  return out;
}

/** The draft as a fleet file: what Save writes and what Run sends. */
export function toYaml(d: ComposerDraft): string {
  const lines = [`name: ${yamlString(d.name.trim())}`];
  if (d.concurrency.trim()) lines.push(`concurrency: ${d.concurrency.trim()}`);
  if (d.isolation.trim()) lines.push(`isolation: ${yamlString(d.isolation.trim())}`);
  if (d.setup.trim()) lines.push(`setup: ${yamlString(d.setup.trim())}`);
  lines.push('tasks:');
  for (const t of d.tasks) {
    lines.push(`  - id: ${yamlString(t.id.trim())}`);
    lines.push(`    goal: ${yamlString(t.goal.trim())}`);
    if (t.pane.trim()) lines.push(`    pane: ${yamlString(t.pane.trim())}`);
    for (const [k, v] of [['role', t.role], ['persona', t.persona], ['template', t.template], ['isolation', t.isolation], ['ssh', t.ssh]] as const)
      if (v.trim()) lines.push(`    ${k}: ${yamlString(v.trim())}`);
    if (t.priority.trim() && t.priority.trim() !== '0') lines.push(`    priority: ${t.priority.trim()}`);
    if (t.dependsOn.length) lines.push(`    depends_on: [${t.dependsOn.map(yamlString).join(', ')}]`);
    for (const [k, v] of checkKeys(t)) lines.push(`    ${k}: ${v}`);
  }
  return lines.join('\n') + '\n';
}

// ---- a parsed file in -------------------------------------------------------------------------

function taskFromSpec(s: FleetTaskSpec, existing: TaskDraft[]): TaskDraft {
  const t = {
    ...newTask(existing),
    id: s.id,
    goal: s.goal,
    role: s.role ?? '',
    persona: s.persona ?? '',
    template: s.template ?? '',
    isolation: s.isolation ?? '',
    ssh: s.ssh ?? '',
    dependsOn: [...(s.dependsOn ?? [])],
  };
  t.pane = s.pane === `${s.id}-term` ? '' : s.pane;
  t.priority = s.priority ? String(s.priority) : '';
  const c = s.criterion;
  const timeout = c.timeout === undefined || c.timeout === '' || c.timeout === '0s' ? '' : String(c.timeout);
  switch (c.kind) {
    case 'shell':
      Object.assign(t, { check: 'shell', checkText: c.command ?? '', exitCode: c.exitCode ? String(c.exitCode) : '', timeout });
      break;
    case 'model_question':
      if (c.question === JUDGE_PREFIX + s.goal && c.threshold === 'high_confidence') break; // the default
      Object.assign(t, { check: 'question', checkText: c.question ?? '', threshold: c.threshold ?? '' });
      break;
    case 'json_predicate':
      Object.assign(t, { check: 'json', checkText: c.expr ?? '', jsonSource: c.source ?? '', timeout });
      break;
    case 'visual':
      Object.assign(t, { check: 'visual', checkText: c.question ?? '', visualPane: c.paneId ?? '' });
      break;
    case 'manual':
      t.check = 'manual';
      break;
  }
  return t;
}

/** A draft from a file the server parsed; the run options (risk, sandbox) are kept from base. */
export function fromFile(file: FleetFile, base: ComposerDraft = emptyComposer()): ComposerDraft {
  const tasks: TaskDraft[] = [];
  for (const s of file.tasks) tasks.push(taskFromSpec(s, tasks));
  return {
    ...base,
    name: file.name,
    concurrency: file.concurrency ? String(file.concurrency) : '',
    isolation: file.isolation ?? '',
    setup: file.setup ?? '',
    tasks,
  };
}

// ---- mistakes ---------------------------------------------------------------------------------

/** Where a message shows: a fleet field ('name'), or a task's field ('<key>:goal'). */
export function fieldKey(task: TaskDraft | null, field: string): string {
  return task ? `${task.key}:${field}` : field;
}

export type ComposerErrors = Record<string, string>;

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What can be told before asking the server: empty required fields, bad ids, unknown dependencies, a cycle. */
export function checkDraft(d: ComposerDraft): ComposerErrors {
  const errs: ComposerErrors = {};
  if (!d.name.trim()) errs.name = 'Name the fleet.';
  const c = d.concurrency.trim();
  if (c && !(/^\d+$/.test(c) && +c >= 1 && +c <= 20)) errs.concurrency = 'A whole number from 1 to 20.';
  if (!d.tasks.length) errs.tasks = 'Add at least one task.';
  const ids = new Set<string>();
  for (const t of d.tasks) {
    const id = t.id.trim();
    if (!id) errs[fieldKey(t, 'id')] = 'Every task needs an id.';
    else if (!ID.test(id)) errs[fieldKey(t, 'id')] = 'Letters, digits, - _ . (starting with a letter or digit).';
    else if (ids.has(id)) errs[fieldKey(t, 'id')] = 'Another task has this id.';
    ids.add(id);
    if (!t.goal.trim()) errs[fieldKey(t, 'goal')] = 'Say what the task should achieve.';
    if (t.pane.trim() && !ID.test(t.pane.trim())) errs[fieldKey(t, 'pane')] = 'A pane id uses letters, digits, - _ .';
    if (t.priority.trim() && !/^-?\d+$/.test(t.priority.trim())) errs[fieldKey(t, 'priority')] = 'A whole number.';
    if (t.check !== 'judge' && t.check !== 'manual' && !t.checkText.trim()) errs[fieldKey(t, 'check')] = 'Fill in the check, or pick Judge.';
  }
  for (const t of d.tasks) {
    const unknown = t.dependsOn.filter((x) => !ids.has(x));
    if (unknown.length) errs[fieldKey(t, 'depends_on')] = `No task ${unknown.join(', ')}.`;
  }
  const cycle = findCycle(d.tasks.map((t) => ({ id: t.id.trim(), dependsOn: t.dependsOn })));
  if (cycle) {
    const t = d.tasks.find((x) => x.id.trim() === cycle[cycle.length - 2]);
    if (t) errs[fieldKey(t, 'depends_on')] = `A dependency cycle: ${cycle.join(' → ')}.`;
  }
  return errs;
}

/** The task fields a server refusal may name, mapped to the Composer's inputs. */
function inputFor(field: string): string {
  if (field.startsWith('check_') || ['exit_code', 'threshold', 'json_source', 'visual_pane', 'criterion'].includes(field)) return 'check';
  if (field.startsWith('criterion.')) return 'check';
  if (field === 'paneId') return 'pane';
  return field;
}

/** Where the server's refusal shows: next to the task's field, the run options, or the fleet's. */
export function placeError(place: FleetErrorPlace, d: ComposerDraft): { key: string; message: string } {
  const field = place.field ?? '';
  // The run's policy and settings are the Composer's own fields, whichever task reported them.
  if (field === 'policy.sandboxDir' || field === 'sandboxDir') return { key: 'sandboxDir', message: place.message };
  if (field === 'policy.risk' || field === 'risk') return { key: 'risk', message: place.message };
  if (place.task) {
    const pos = /^#(\d+)$/.exec(place.task);
    const t = pos ? d.tasks[+pos[1] - 1] : d.tasks.find((x) => x.id.trim() === place.task);
    if (t) return { key: fieldKey(t, inputFor(field)), message: place.message };
  }
  if (['name', 'concurrency', 'tasks'].includes(field)) return { key: field, message: place.message };
  return { key: 'file', message: place.message };
}

/** How the fleet runs: the ceiling and the sandbox every task's goal gets. */
export function runOptions(d: ComposerDraft): FleetRunOptions {
  return { policy: { risk: d.risk, ...(d.sandboxDir.trim() ? { sandboxDir: d.sandboxDir.trim() } : {}) } };
}
