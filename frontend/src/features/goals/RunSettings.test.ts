// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { savedProvider } from '../../lib/api/providers.fixture';
import { emptyDraft } from './newGoalForm';
import RunSettings from './RunSettings.svelte';

const input = (testid: string) => screen.getByTestId(testid) as HTMLInputElement;

describe('RunSettings', () => {
  it("shows the runner's defaults as placeholders and puts what is typed and picked in the draft", async () => {
    const draft = emptyDraft('p1');
    render(RunSettings, { draft, errors: {}, providers: [savedProvider('p1'), savedProvider('p2')] });
    expect(['goal-wall-clock', 'goal-max-steps', 'goal-budget-usd', 'goal-critic-interval', 'goal-bounce-budget'].map((id) => input(id).placeholder)).toEqual([
      '60',
      '300',
      'no cap',
      '5',
      '5',
    ]);
    await fireEvent.input(input('goal-max-steps'), { target: { value: '40' } });
    await fireEvent.input(input('goal-budget-usd'), { target: { value: '1.5' } });
    const critic = screen.getByTestId('goal-critic-provider') as HTMLSelectElement;
    await fireEvent.change(critic, { target: { value: 'p2' } });
    expect([draft.maxSteps, draft.budgetUsd, draft.criticProvider]).toEqual(['40', '1.5', 'p2']);
  });

  it('shows a field error under its input', () => {
    render(RunSettings, { draft: emptyDraft('p1'), errors: { 'settings.maxSteps': 'max steps: must be a whole number' }, providers: [] });
    expect(screen.getByTestId('goal-run-settings').textContent).toContain('max steps: must be a whole number');
  });
});
