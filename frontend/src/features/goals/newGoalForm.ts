// The New Goal form as pure functions: what the inputs hold (a draft of strings), which
// required fields are empty, and how a draft becomes the GoalSpec to send. The dialog only
// wires these up.
import type { CriterionKind, CriterionSpec, GoalPolicy, GoalRunSettings, GoalSpec, Risk } from '../../lib/api';

/** The form's inputs as typed. Numbers stay strings until sending, so a half-typed one is kept. */
export interface GoalDraft {
  paneId: string;
  goal: string;
  kind: CriterionKind;
  /** shell */
  command: string;
  exitCode: string;
  /** seconds; '' = the default (2 minutes) */
  timeout: string;
  /** model_question */
  question: string;
  threshold: 'yes' | 'high_confidence';
  /** json_predicate */
  expr: string;
  source: 'claim' | 'file' | 'command';
  /** the file's path or the command, for those sources */
  sourceArg: string;
  /** visual */
  visualQuestion: string;
  visualPaneId: string;
  risk: Risk;
  requireStepProtocol: boolean;
  sandboxDir: string;
  allowedTools: string[];
  deniedTools: string[];
  /** minutes; '' = the runner's default (60) */
  wallClockMinutes: string;
  maxSteps: string;
  /** '' = the default (5); '0' = no critic */
  criticInterval: string;
  criticProvider: string;
  finalizeCritic: boolean;
  bounceBudget: string;
  budgetUsd: string;
  provider: string;
  /** a persona id of the catalog; '' = none */
  persona: string;
  /** skill ids attached up front */
  skills: string[];
  /** run in its own git worktree and branch (sent beside the spec, not in it) */
  worktree: boolean;
}

export const CRITERION_TABS: ReadonlyArray<{ kind: CriterionKind; label: string }> = [
  { kind: 'shell', label: 'Shell' },
  { kind: 'model_question', label: 'Model question' },
  { kind: 'json_predicate', label: 'JSON predicate' },
  { kind: 'visual', label: 'Visual' },
  { kind: 'manual', label: 'Manual' },
];

/** The runner's defaults, shown as placeholders (backend/goal/goal.go). */
export const DEFAULTS = { wallClockMinutes: 60, maxSteps: 300, criticInterval: 5, bounceBudget: 5, timeoutSeconds: 120 };

/**
 * The form's fields, named as the backend names them in its refusals, so an error from either
 * side lands next to the same input.
 */
export const FORM_FIELDS = [
  'goal',
  'paneId',
  'criterion.command',
  'criterion.exitCode',
  'criterion.timeout',
  'criterion.question',
  'criterion.threshold',
  'criterion.expr',
  'criterion.source',
  'criterion.paneId',
  'policy.risk',
  'policy.sandboxDir',
  'policy.allowedTools',
  'policy.deniedTools',
  'settings.provider',
  'settings.criticProvider',
  'settings.criticIntervalSteps',
  'settings.wallClock',
  'settings.maxSteps',
  'settings.bounceBudget',
  'settings.budgetUsd',
  'persona',
  'skill',
  'worktree',
] as const;
export type FormField = (typeof FORM_FIELDS)[number];
export type FieldErrors = Partial<Record<FormField, string>>;

export function isFormField(field: string | undefined): field is FormField {
  return (FORM_FIELDS as readonly string[]).includes(field ?? '');
}

/** True when the draft holds something the person wrote or chose (the pane aside). */
export function draftHasContent(d: GoalDraft): boolean {
  const blank = emptyDraft(d.paneId);
  return (Object.keys(blank) as Array<keyof GoalDraft>).some((k) => JSON.stringify(d[k]) !== JSON.stringify(blank[k]));
}

export function emptyDraft(paneId = ''): GoalDraft {
  return {
    paneId,
    goal: '',
    kind: 'shell',
    command: '',
    exitCode: '0',
    timeout: '',
    question: '',
    threshold: 'yes',
    expr: '',
    source: 'claim',
    sourceArg: '',
    visualQuestion: '',
    visualPaneId: '',
    risk: 'write_local',
    requireStepProtocol: false,
    sandboxDir: '',
    allowedTools: [],
    deniedTools: [],
    wallClockMinutes: '',
    maxSteps: '',
    criticInterval: '',
    criticProvider: '',
    finalizeCritic: false,
    bounceBudget: '',
    budgetUsd: '',
    provider: '',
    persona: '',
    skills: [],
    worktree: false,
  };
}

/** A tool goes on one list at most: putting it on one takes it off the other. */
export function setToolList(d: GoalDraft, tool: string, list: 'allow' | 'deny' | 'none'): GoalDraft {
  const allowedTools = d.allowedTools.filter((t) => t !== tool);
  const deniedTools = d.deniedTools.filter((t) => t !== tool);
  if (list === 'allow') allowedTools.push(tool);
  if (list === 'deny') deniedTools.push(tool);
  return { ...d, allowedTools, deniedTools };
}

export type BuildResult = { ok: true; spec: GoalSpec } | { ok: false; errors: FieldErrors };

/**
 * Checks the draft and builds the spec to send. Every empty required field and every number
 * that does not parse gets its own message; then nothing is sent. Whatever else is wrong (a
 * sandbox that does not exist, an unknown provider) is the backend's to say, per field.
 */
export function buildSpec(d: GoalDraft): BuildResult {
  const errors: FieldErrors = {};
  const need = (field: FormField, value: string, message: string) => {
    if (!value.trim()) errors[field] = message;
  };
  need('goal', d.goal, 'Say what the goal should achieve.');
  need('paneId', d.paneId, 'Pick the pane the goal works in.');

  const criterion: CriterionSpec = { kind: d.kind };
  switch (d.kind) {
    case 'shell': {
      need('criterion.command', d.command, 'Give the shell command that checks the goal, e.g. test -f done.txt.');
      criterion.command = d.command.trim();
      const code = parseWhole(d.exitCode, true);
      if (Number.isNaN(code)) errors['criterion.exitCode'] = `"${d.exitCode.trim()}" is not an exit code: enter a whole number such as 0.`;
      else if (code) criterion.exitCode = code;
      const timeout = parseNumber(d.timeout);
      if (Number.isNaN(timeout) || timeout < 0) errors['criterion.timeout'] = `"${d.timeout.trim()}" is not a number of seconds: enter one such as 90, or leave it empty.`;
      else if (timeout > 0) criterion.timeout = `${timeout}s`;
      break;
    }
    case 'model_question':
      need('criterion.question', d.question, 'Ask the yes/no question the judge answers, e.g. "Does the report list every failing test?"');
      criterion.question = d.question.trim();
      if (d.threshold !== 'yes') criterion.threshold = d.threshold;
      break;
    case 'json_predicate':
      need('criterion.expr', d.expr, 'Give the expression that must be true of the JSON, e.g. passed == total.');
      criterion.expr = d.expr.trim();
      if (d.source !== 'claim') {
        need('criterion.source', d.sourceArg, d.source === 'file' ? 'Give the path of the JSON file.' : 'Give the command that prints the JSON.');
        criterion.source = `${d.source}:${d.sourceArg.trim()}`;
      }
      break;
    case 'visual':
      need('criterion.question', d.visualQuestion, 'Ask the yes/no question about the screen, e.g. "Does the page show the dashboard?"');
      need('criterion.paneId', d.visualPaneId, 'Pick the browser pane to look at.');
      criterion.question = d.visualQuestion.trim();
      criterion.paneId = d.visualPaneId;
      break;
    case 'manual':
      break;
  }

  const policy: GoalPolicy = { risk: d.risk };
  if (d.sandboxDir.trim()) policy.sandboxDir = d.sandboxDir.trim();
  if (d.allowedTools.length) policy.allowedTools = [...d.allowedTools];
  if (d.deniedTools.length) policy.deniedTools = [...d.deniedTools];
  if (d.requireStepProtocol) policy.requireStepProtocol = true;

  const settings: GoalRunSettings = {};
  if (d.provider) settings.provider = d.provider;
  if (d.criticProvider) settings.criticProvider = d.criticProvider;
  if (d.finalizeCritic) settings.finalizeCritic = true;
  const minutes = parseNumber(d.wallClockMinutes);
  // 0 is refused like the other limits: a goal with no time at all could not take one step.
  if (Number.isNaN(minutes) || minutes < 0 || (minutes === 0 && d.wallClockMinutes.trim() !== ''))
    errors['settings.wallClock'] = `"${d.wallClockMinutes.trim()}" is not a number of minutes above 0: enter one such as 30, or leave it empty for ${DEFAULTS.wallClockMinutes}.`;
  else if (minutes > 0) settings.wallClock = `${minutes}m`;
  const count = (field: FormField, raw: string, zeroOk: boolean, what: string): number | undefined => {
    const n = parseWhole(raw, zeroOk);
    if (Number.isNaN(n)) {
      errors[field] = `"${raw.trim()}" is not ${what}: enter a whole number${zeroOk ? ' (0 or more)' : ' above 0'}, or leave it empty for the default.`;
      return undefined;
    }
    return n;
  };
  const maxSteps = count('settings.maxSteps', d.maxSteps, false, 'a number of steps');
  if (maxSteps) settings.maxSteps = maxSteps;
  const bounce = count('settings.bounceBudget', d.bounceBudget, false, 'a number of failed verifications');
  if (bounce) settings.bounceBudget = bounce;
  if (d.criticInterval.trim()) {
    const every = count('settings.criticIntervalSteps', d.criticInterval, true, 'a number of steps');
    if (every !== undefined) settings.criticIntervalSteps = every;
  }
  const budget = parseNumber(d.budgetUsd);
  if (Number.isNaN(budget) || budget < 0) errors['settings.budgetUsd'] = `"${d.budgetUsd.trim()}" is not an amount in dollars: enter one such as 2.50, or leave it empty for no cap.`;
  else if (budget > 0) settings.budgetUsd = budget;

  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const spec: GoalSpec = { paneId: d.paneId, goal: d.goal.trim(), criterion, policy, settings };
  if (d.persona) spec.persona = d.persona;
  if (d.skills.length) spec.skills = [...d.skills];
  return { ok: true, spec };
}

/** '' → 0; otherwise a whole number (0 only when zeroOk), else NaN. */
function parseWhole(s: string, zeroOk: boolean): number {
  const t = s.trim();
  if (!t) return 0;
  if (!/^\d+$/.test(t)) return NaN;
  const n = Number(t);
  return n === 0 && !zeroOk ? NaN : n;
}

/** '' → 0; a decimal (a comma is accepted as the point), else NaN. */
function parseNumber(s: string): number {
  const t = s.trim().replace(',', '.');
  if (!t) return 0;
  return /^\d+(\.\d*)?$|^\.\d+$/.test(t) ? Number(t) : NaN;
}
