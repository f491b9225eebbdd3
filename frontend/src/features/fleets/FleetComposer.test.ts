// @vitest-environment jsdom
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { Backend } from '../../lib/api';
import { BackendError, emptyListing, type CatalogListing } from '../../lib/api';
import { createAppContext } from '../../lib/state/context';
import Harness from '../goals/GoalsHarness.test.svelte';
import FleetComposer from './FleetComposer.svelte';

const listing: CatalogListing = {
  ...emptyListing(),
  personas: [{ id: 'reviewer', name: 'Careful reviewer', prompt: 'x', source: 'builtin' }],
  tasks: [
    {
      id: 'fix-bug',
      name: 'Fix a bug',
      goal: 'Fix {{bug}}',
      criterion: 'Is {{bug}} gone?',
      personas: ['reviewer'],
      parameters: [{ name: 'bug', question: 'Which bug?' }],
      source: 'builtin',
    },
  ],
  templates: [
    { id: 'shell', name: 'Shell', command: '', source: 'builtin' },
    { id: 'claude', name: 'Claude Code', command: 'claude', source: 'builtin' },
  ],
};

function setup() {
  const renderTask = vi.fn(async (_id: string, params: Record<string, string>) => {
    if (!params.bug?.trim()) throw new BackendError('params.bug: {{bug}} is empty: answer "Which bug?"', { status: 400, field: 'params.bug' });
    return { goal: `Fix ${params.bug}`, criterion: `Is ${params.bug} gone?`, persona: 'reviewer' };
  });
  const create = vi.fn(async () => ({ id: 'fleet-1', name: 'f', status: 'running', tasks: [] }));
  const backend = {
    kind: 'web',
    catalog: { list: vi.fn(async () => listing), renderTask },
    fleets: { create, parse: vi.fn(), saveFile: vi.fn() },
    subscribe: () => () => {},
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  render(Harness, { ctx, component: FleetComposer, with: { seed: null, onclose: () => {} } });
  return { renderTask, create };
}

const options = (testid: string) => [...(screen.getByTestId(testid) as HTMLSelectElement).options].map((o) => o.value);

describe('FleetComposer', () => {
  it('offers the pane templates and personas, fills a task from a task template, and runs them as the file says', async () => {
    const { renderTask, create } = setup();
    await waitFor(() => expect(options('composer-task-template')).toEqual(['', 'shell', 'claude']));
    expect(options('composer-task-persona')).toEqual(['', 'reviewer']);

    await fireEvent.change(screen.getByTestId('composer-task-template-select'), { target: { value: 'fix-bug' } });
    await fireEvent.click(screen.getByTestId('composer-task-template-apply'));
    // An empty parameter is refused by name, under its input; the task is left as it was.
    await waitFor(() => expect(screen.getByTestId('composer-task-template-param-error').textContent).toContain('{{bug}} is empty'));
    expect((screen.getByTestId('composer-task-goal') as HTMLTextAreaElement).value).toBe('');

    await fireEvent.input(screen.getByTestId('composer-task-template-param'), { target: { value: 'the crash on empty input' } });
    await fireEvent.click(screen.getByTestId('composer-task-template-apply'));
    await waitFor(() => expect((screen.getByTestId('composer-task-goal') as HTMLTextAreaElement).value).toBe('Fix the crash on empty input'));
    expect(renderTask).toHaveBeenLastCalledWith('fix-bug', { bug: 'the crash on empty input' });
    expect((screen.getByTestId('composer-task-check') as HTMLSelectElement).value).toBe('question');
    expect((screen.getByTestId('composer-task-check-text') as HTMLInputElement).value).toBe('Is the crash on empty input gone?');
    expect((screen.getByTestId('composer-task-persona') as HTMLSelectElement).value).toBe('reviewer');

    await fireEvent.change(screen.getByTestId('composer-task-template'), { target: { value: 'claude' } });
    await fireEvent.input(screen.getByTestId('composer-name'), { target: { value: 'bugs' } });
    await fireEvent.click(screen.getByTestId('composer-run'));
    await waitFor(() => expect(create).toHaveBeenCalled());
    const yaml = (create.mock.calls[0] as unknown[])[0] as string;
    expect(yaml).toContain('    persona: reviewer\n    template: claude\n');
    expect(yaml).toContain('    goal: Fix the crash on empty input\n');
    expect(yaml).toContain('    check_question: "Is the crash on empty input gone?"\n');
  });
});
