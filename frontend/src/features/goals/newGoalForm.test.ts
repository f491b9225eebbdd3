import { describe, expect, it } from 'vitest';
import { buildSpec, emptyDraft, isFormField, setToolList, type GoalDraft } from './newGoalForm';

const draft = (over: Partial<GoalDraft> = {}): GoalDraft => ({ ...emptyDraft('pane-1'), goal: 'Write done.txt', command: 'test -f done.txt', ...over });

function errorsOf(d: GoalDraft) {
  const r = buildSpec(d);
  if (r.ok) throw new Error('expected errors, got a spec');
  return r.errors;
}

function specOf(d: GoalDraft) {
  const r = buildSpec(d);
  if (!r.ok) throw new Error(`expected a spec, got ${JSON.stringify(r.errors)}`);
  return r.spec;
}

describe('buildSpec: required fields', () => {
  it('gives each empty required field its own message', () => {
    const errors = errorsOf({ ...emptyDraft(), kind: 'shell' });
    expect(Object.keys(errors).sort()).toEqual(['criterion.command', 'goal', 'paneId']);
    expect(errors.goal).toMatch(/what the goal should achieve/);
    expect(errors.paneId).toMatch(/pane/);
    expect(errors['criterion.command']).toMatch(/shell command/);
  });

  it("asks for the chosen criterion's own required field only", () => {
    expect(Object.keys(errorsOf(draft({ kind: 'model_question' })))).toEqual(['criterion.question']);
    expect(Object.keys(errorsOf(draft({ kind: 'json_predicate' })))).toEqual(['criterion.expr']);
    expect(Object.keys(errorsOf(draft({ kind: 'visual' }))).sort()).toEqual(['criterion.paneId', 'criterion.question']);
    expect(Object.keys(errorsOf(draft({ kind: 'json_predicate', expr: 'ok', source: 'file' })))).toEqual(['criterion.source']);
    expect(buildSpec(draft({ kind: 'manual', command: '' })).ok).toBe(true);
  });

  it('treats whitespace as empty', () => {
    expect(Object.keys(errorsOf(draft({ goal: '   ', command: ' \t' }))).sort()).toEqual(['criterion.command', 'goal']);
  });

  it('names numbers that do not parse, next to their field', () => {
    const errors = errorsOf(draft({ exitCode: 'x', timeout: '-3', wallClockMinutes: 'ten', maxSteps: '0', criticInterval: '1.5', bounceBudget: 'a', budgetUsd: '$3' }));
    expect(Object.keys(errors).sort()).toEqual([
      'criterion.exitCode',
      'criterion.timeout',
      'settings.bounceBudget',
      'settings.budgetUsd',
      'settings.criticIntervalSteps',
      'settings.maxSteps',
      'settings.wallClock',
    ]);
    expect(errors['settings.wallClock']).toContain('"ten" is not a number of minutes');
  });

  it('refuses a wall clock of 0 like the other limits, and takes an empty one as the default', () => {
    expect(errorsOf(draft({ wallClockMinutes: '0' }))['settings.wallClock']).toContain('"0" is not a number of minutes above 0');
    expect(specOf(draft({ wallClockMinutes: '' })).settings.wallClock).toBeUndefined();
  });
});

describe('buildSpec: the spec sent', () => {
  it('sends only the fields of the chosen criterion kind', () => {
    const filled = draft({ question: 'Is it done?', expr: 'a == 1', visualQuestion: 'Shown?', visualPaneId: 'b1', exitCode: '2', timeout: '90' });
    expect(specOf(filled).criterion).toEqual({ kind: 'shell', command: 'test -f done.txt', exitCode: 2, timeout: '90s' });
    expect(specOf({ ...filled, kind: 'model_question', threshold: 'high_confidence' }).criterion).toEqual({
      kind: 'model_question',
      question: 'Is it done?',
      threshold: 'high_confidence',
    });
    expect(specOf({ ...filled, kind: 'model_question' }).criterion).toEqual({ kind: 'model_question', question: 'Is it done?' });
    expect(specOf({ ...filled, kind: 'json_predicate', source: 'command', sourceArg: 'cat r.json' }).criterion).toEqual({
      kind: 'json_predicate',
      expr: 'a == 1',
      source: 'command:cat r.json',
    });
    expect(specOf({ ...filled, kind: 'visual' }).criterion).toEqual({ kind: 'visual', question: 'Shown?', paneId: 'b1' });
    expect(specOf({ ...filled, kind: 'manual' }).criterion).toEqual({ kind: 'manual' });
  });

  it('leaves the defaults to the backend and sends what was set', () => {
    const plain = specOf(draft());
    expect(plain).toEqual({
      paneId: 'pane-1',
      goal: 'Write done.txt',
      criterion: { kind: 'shell', command: 'test -f done.txt' },
      policy: { risk: 'write_local' },
      settings: {},
    });
    const full = specOf(
      draft({
        risk: 'read_only',
        sandboxDir: ' /tmp/sb ',
        requireStepProtocol: true,
        allowedTools: ['write_to_terminal'],
        deniedTools: ['browser_execute_js'],
        wallClockMinutes: '1.5',
        maxSteps: '40',
        criticInterval: '0',
        criticProvider: 'critic-id',
        finalizeCritic: true,
        bounceBudget: '2',
        budgetUsd: '0,75',
        provider: 'prov-id',
      }),
    );
    expect(full.policy).toEqual({
      risk: 'read_only',
      sandboxDir: '/tmp/sb',
      requireStepProtocol: true,
      allowedTools: ['write_to_terminal'],
      deniedTools: ['browser_execute_js'],
    });
    expect(full.settings).toEqual({
      provider: 'prov-id',
      criticProvider: 'critic-id',
      finalizeCritic: true,
      wallClock: '1.5m',
      maxSteps: 40,
      criticIntervalSteps: 0, // 0 turns the critic off, unlike an empty field
      bounceBudget: 2,
      budgetUsd: 0.75,
    });
  });
});

describe('tool lists and fields', () => {
  it('keeps a tool on one list at most', () => {
    let d = setToolList(draft(), 'write_to_terminal', 'allow');
    expect([d.allowedTools, d.deniedTools]).toEqual([['write_to_terminal'], []]);
    d = setToolList(d, 'write_to_terminal', 'deny');
    expect([d.allowedTools, d.deniedTools]).toEqual([[], ['write_to_terminal']]);
    d = setToolList(d, 'write_to_terminal', 'none');
    expect([d.allowedTools, d.deniedTools]).toEqual([[], []]);
  });

  it("knows which backend fields have an input, so others are shown at the top", () => {
    expect(isFormField('criterion.command')).toBe(true);
    expect(isFormField('policy.sandboxDir')).toBe(true);
    expect(isFormField('settings.provider')).toBe(true);
    expect(isFormField('criterion')).toBe(false);
    expect(isFormField(undefined)).toBe(false);
  });
});

describe('buildSpec: persona and skills', () => {
  it('sends the picked persona and skills, and nothing when none is picked', () => {
    const spec = specOf(draft({ persona: 'reviewer', skills: ['code-review'] }));
    expect(spec.persona).toBe('reviewer');
    expect(spec.skills).toEqual(['code-review']);
    const plain = specOf(draft());
    expect('persona' in plain).toBe(false);
    expect('skills' in plain).toBe(false);
  });

  it('puts a refusal of an unknown persona next to the picker', () => {
    expect(isFormField('persona')).toBe(true);
    expect(isFormField('skill')).toBe(true);
  });
});
