// @vitest-environment jsdom
// Where the Changes view and Land fleet open from: a task's card in the fleet's detail (when
// the task has a branch) and the fleet's header, over the real call table and a fake server.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { Fleet, FleetTask } from '../../lib/api';
import { createAppContext } from '../../lib/state/context';
import FleetDetail from '../fleets/FleetDetail.svelte';
import TaskCard from '../fleets/TaskCard.svelte';
import Harness from '../goals/GoalsHarness.test.svelte';
import { server } from './review.fixture';

const WORKTREE = { repo: '/src/app', dir: '/src/app/.worktrees/build', workDir: '/src/app/.worktrees/build', branch: 'fleet/fleet-1/build', base: 'ba47f32c0ffee', target: 'main' };

function task(over: Partial<FleetTask>): FleetTask {
  return { id: 't', goal: 'Do it', pane: 't-term', criterion: { kind: 'manual' }, seq: 1, status: 'completed', createdAt: '', ...over };
}

function fleet(tasks: FleetTask[]): Fleet {
  return {
    id: 'fleet-1',
    name: 'release',
    status: 'completed',
    spec: { concurrency: 1, policy: { risk: 'write_local' }, settings: {}, target: 'main' },
    tasks,
    createdAt: '',
    updatedAt: '',
  } as Fleet;
}

describe('opening the review', () => {
  it('offers Changes on a task card only when the task has a branch', async () => {
    const onchanges = vi.fn();
    const plain = render(TaskCard, { task: task({}), goal: undefined, checked: false, ontoggle: () => {}, onopengoal: () => {}, onchanges });
    expect(screen.queryByTestId('task-changes')).toBeNull();
    plain.unmount();
    render(TaskCard, { task: task({ worktree: WORKTREE }), goal: undefined, checked: false, ontoggle: () => {}, onopengoal: () => {}, onchanges });
    await fireEvent.click(screen.getByTestId('task-changes'));
    expect(onchanges).toHaveBeenCalled();
  });

  it("opens a task's Changes from the fleet's detail as a dialog that Esc closes, focus back on the button", async () => {
    const { backend, named } = server();
    const ctx = createAppContext(backend);
    const f = fleet([
      task({ id: 'build', worktree: WORKTREE, report: 'Built; go test passed.', review: { land: 'refused', story: [{ at: '2026-11-27T10:00:00Z', kind: 'refused', text: 'conflict in greet.go' }] } }),
      task({ id: 'docs', seq: 2 }),
    ]);
    render(Harness, { ctx, component: FleetDetail, with: { fleet: f } });
    expect(screen.getAllByTestId('task-changes')).toHaveLength(1);
    const open = screen.getByTestId('task-changes');
    open.focus();
    await fireEvent.click(open);
    // The dialog's module loads when first opened (the first time in a test run takes a while).
    const dialog = await screen.findByTestId('changes-dialog', {}, { timeout: 10_000 });
    expect(dialog.getAttribute('aria-label')).toBe('Changes of task build');
    await waitFor(() => expect(within(dialog).getAllByTestId('changes-file')).toHaveLength(3));
    expect(named('GetChanges')[0]).toEqual({ ref: 'fleet-1/build' });
    // Beside the diff: the report, the land status and the story.
    expect(within(dialog).getByTestId('review-report').textContent).toContain('go test passed');
    expect(within(dialog).getByTestId('review-land-status').textContent).toContain('refused');
    expect(within(dialog).getByTestId('review-story').textContent).toContain('conflict in greet.go');

    // A review sent: the fleet is read again (its task's story is not in the events).
    await fireEvent.click(within(dialog).getByTestId('whole-comment-box-text'));
    await fireEvent.input(within(dialog).getByTestId('whole-comment-box-text'), { target: { value: 'Add a test.' } });
    await fireEvent.click(within(dialog).getByTestId('whole-comment-box-save'));
    await waitFor(() => expect(within(dialog).getAllByTestId('pending-comment')).toHaveLength(1));
    const reads = named('GetFleet').length;
    await fireEvent.click(within(dialog).getByTestId('review-send'));
    await waitFor(() => expect(named('GetFleet').length).toBe(reads + 1));
    expect(named('GetFleet').at(-1)).toEqual({ id: 'fleet-1' });

    await fireEvent.keyDown(dialog, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('changes-dialog')).toBeNull());
    expect(document.activeElement).toBe(screen.getByTestId('task-changes'));
  });

  it('lands the whole fleet from its header and shows each task’s outcome', async () => {
    const { backend, named } = server({
      Land: (a) => ({
        outcomes: [
          { ref: `${a.ref}/build`, taskId: 'build', status: 'landed', commit: 'feedfacecafe1234', sentBack: false },
          { ref: `${a.ref}/docs`, taskId: 'docs', status: 'skipped', detail: 'not verified: it has not completed', sentBack: false },
        ],
        strategy: 'merge',
        check: '',
        onRefuse: 'agent',
      }),
    });
    const ctx = createAppContext(backend);
    render(Harness, { ctx, component: FleetDetail, with: { fleet: fleet([task({ id: 'build', worktree: WORKTREE }), task({ id: 'docs', seq: 2, worktree: WORKTREE })]) } });
    await fireEvent.click(screen.getByTestId('fleet-land'));
    const dialog = await screen.findByTestId('land-fleet-dialog');
    await waitFor(() => expect((within(dialog).getByTestId('land-fleet-merge') as HTMLInputElement).checked).toBe(true));
    await fireEvent.click(within(dialog).getByTestId('land-fleet-button'));
    const outcomes = await within(dialog).findAllByTestId('land-fleet-outcome');
    expect(named('Land')).toEqual([{ ref: 'fleet-1', strategy: 'merge', onRefuse: 'agent' }]);
    expect(outcomes.map((o) => `${o.dataset.task}:${o.dataset.status}`)).toEqual(['build:landed', 'docs:skipped']);
    expect(within(outcomes[0]).getByTestId('land-fleet-commit').textContent).toBe('feedfacecafe');
    expect(within(outcomes[1]).getByTestId('land-fleet-detail').textContent).toContain('not verified');
  });
});
