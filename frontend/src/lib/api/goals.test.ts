// The Goal Runner's calls as both transports send them, read from the answers Go really gives:
// testdata/*.json is written by backend/api's TestGoldenGoalAndChatAnswers from a real engine
// whose goal took a step and asked to type in a terminal above its ceiling.
import { describe, expect, it } from 'vitest';
import { BackendError } from './errors';
import { desktop, sentOn, web, type Golden } from './golden.fakes';
import type { CallResult } from './table';
import type { GoalSpec } from './goals';
import listGoals from './testdata/ListGoals.json';
import getGoal from './testdata/GetGoal.json';
import goalSteps from './testdata/GoalSteps.json';
import goalEvents from './testdata/GoalEvents.json';
import pendingApprovals from './testdata/PendingApprovals.json';
import answerApproval from './testdata/AnswerApproval.json';
import goalSettings from './testdata/GoalSettings.json';

const picture: CallResult<'GoalStepImage'> = { mediaType: 'image/jpeg', data: 'AAEC' };
const tools: CallResult<'Tools'> = { tools: [{ name: 'write_to_terminal', description: 'Types.', schema: {}, risk: 'write_local' }] };

const golden: Golden = {
  ListGoals: listGoals,
  StartGoal: getGoal,
  GetGoal: getGoal,
  GoalSteps: goalSteps,
  GoalEvents: goalEvents,
  GoalStepImage: picture,
  PruneGoals: { deleted: 2 },
  PendingApprovals: pendingApprovals,
  AnswerApproval: answerApproval,
  Tools: tools,
  GoalSettings: goalSettings,
  SetGoalSettings: goalSettings,
};

const spec: GoalSpec = {
  paneId: 'pane-1',
  goal: 'Build it',
  criterion: { kind: 'shell', command: 'make', timeout: '90s' },
  policy: { risk: 'write_local' },
  settings: { wallClock: '30m', budgetUsd: 2 },
};

describe('the goal calls on both transports', () => {
  it('sends each goal call as its name and one JSON object of arguments, alike on both doors', async () => {
    const d = desktop(golden);
    const w = web(golden);
    for (const { goals } of [d.api, w.api]) {
      await goals.start(spec);
      await goals.start(spec, { worktree: true });
      await goals.list();
      await goals.get('goal-1');
      await goals.steps('goal-1', 3, 50);
      await goals.stepImage('goal-1', 2, 0);
      await goals.events('goal-1', 7);
      await goals.pause('goal-1');
      await goals.resume('goal-1');
      await goals.abort('goal-1');
      await goals.remove('goal-1');
      await goals.steer('goal-1', 'use the tests');
      await goals.reopen('goal-1', 'also the docs');
      await goals.raiseBudget('goal-1', 5, 0);
      await goals.prune();
      await goals.pendingApprovals();
      await goals.answerApproval('appr-1', 'allow_goal', 'fine');
      await goals.tools();
      await goals.settings();
      await goals.setSettings({ maxConcurrent: 2, budgetUsd: 1, budgetTokens: 0 });
    }
    const want = [
      ['StartGoal', { spec }],
      ['StartGoal', { spec, worktree: true }],
      ['ListGoals', {}],
      ['GetGoal', { id: 'goal-1' }],
      ['GoalSteps', { id: 'goal-1', after: 3, limit: 50 }],
      ['GoalStepImage', { id: 'goal-1', index: 2, n: 0 }],
      ['GoalEvents', { id: 'goal-1', after: 7 }],
      ['PauseGoal', { id: 'goal-1' }],
      ['ResumeGoal', { id: 'goal-1' }],
      ['AbortGoal', { id: 'goal-1' }],
      ['DeleteGoal', { id: 'goal-1' }],
      ['SteerGoal', { id: 'goal-1', text: 'use the tests' }],
      ['ReopenGoal', { id: 'goal-1', feedback: 'also the docs' }],
      ['RaiseGoalBudget', { id: 'goal-1', budgetUsd: 5, budgetTokens: 0 }],
      ['PruneGoals', {}],
      ['PendingApprovals', {}],
      ['AnswerApproval', { id: 'appr-1', status: 'allow_goal', reason: 'fine' }],
      ['Tools', {}],
      ['GoalSettings', {}],
      ['SetGoalSettings', { settings: { maxConcurrent: 2, budgetUsd: 1, budgetTokens: 0 } }],
    ];
    const sent = sentOn(d, w);
    expect(sent.desktop).toEqual(want);
    expect(sent.web).toEqual(want);
  });

  it("reads Go's real answers into the goal features' types", async () => {
    for (const { api } of [desktop(golden), web(golden)]) {
      const [g] = await api.goals.list();
      expect(g).toMatchObject({ id: 'goal-0', status: 'aborted', report: 'Aborted by the user.' });
      expect(g.spec.policy.risk).toBe('read_only');
      expect(g.state.todos.map((t) => t.text)).toEqual(['Read the notes', 'Say hello']);
      // Go omits what is empty or zero; the UI's types have them.
      expect(g.state.granted).toEqual([]);
      expect(g.state.lastCritic).toBe('');
      expect(g.state.usage.cacheWriteTokens).toBe(0);

      const steps = await api.goals.steps('goal-0', 0, 500);
      expect(steps.map((s) => [s.index, s.tool, s.isError])).toEqual([
        [1, 'write_todos', false],
        [2, 'write_to_terminal', true],
      ]);
      expect(steps[1].result).toContain('The user denied this call');

      const events = await api.goals.events('goal-0', 0);
      expect(events.map((e) => e.type)).toEqual(['status', 'started', 'notice', 'step', 'approval_requested', 'approval_resolved', 'step', 'ended']);
      expect(events[7].data).toEqual({ report: 'Aborted by the user.', status: 'aborted' });

      // The approval's fields are camelCase; its args are the tool's own, as the model sent them.
      const [ask] = await api.goals.pendingApprovals();
      expect(ask).toMatchObject({ goalId: 'goal-0', callId: 'call-2', tool: 'write_to_terminal', risk: 'write_local', status: 'pending' });
      expect(ask.args).toEqual({ pane_id: 'term-1', text: 'echo hello' });
      const answered = await api.goals.answerApproval(ask.id, 'deny', 'not now');
      expect(answered).toMatchObject({ status: 'deny', answerReason: 'not now' });

      expect(await api.goals.stepImage('goal-0', 1, 0)).toBe('data:image/jpeg;base64,AAEC');
      expect(await api.goals.prune()).toBe(2);
      expect((await api.goals.tools())[0].risk).toBe('write_local');
    }
  });

  it('turns a refusal into a BackendError with its field, alike on both doors', async () => {
    const refusal = { status: 400, body: { error: 'settings.provider: add a provider in Settings → Providers first', field: 'settings.provider' } };
    for (const { api } of [desktop(golden, refusal), web(golden, refusal)]) {
      const err = await api.goals.start(spec).catch((e) => e);
      expect(err).toBeInstanceOf(BackendError);
      expect(err.message).toBe(refusal.body.error);
      expect(err.field).toBe('settings.provider');
    }
  });

  it('says so when a step has no such picture', async () => {
    for (const { api } of [desktop({ ...golden, GoalStepImage: { mediaType: '', data: '' } }), web({ ...golden, GoalStepImage: { mediaType: '', data: '' } })]) {
      await expect(api.goals.stepImage('goal-0', 1, 5)).rejects.toThrow('The step has no such picture');
    }
  });
});
