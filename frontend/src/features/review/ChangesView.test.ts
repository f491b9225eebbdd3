// @vitest-environment jsdom
// The Changes view over the real call table (HttpBackend's ReviewCalls) and a fake server that
// answers the review calls from memory (review.fixture.ts), with a diff git wrote.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetTask } from '../../lib/api';
import ChangesView from './ChangesView.svelte';
import { FILES, filePart, patch, REF, server } from './review.fixture';

/** The line-number button of a line in the drawn diff. */
function lineNumber(file: string, side: 'new' | 'old', line: number): HTMLButtonElement {
  const b = document.querySelector<HTMLButtonElement>(`button[data-line-key="${side}:${line}:${file}"]`);
  if (!b) throw new Error(`no line number for ${side}:${line}:${file}`);
  return b;
}

afterEach(() => localStorage.clear());

describe('ChangesView', () => {
  it("lists the branch's files with their status and lines, and draws the diff unified, then side by side (remembered)", async () => {
    const { api } = server();
    const view = render(ChangesView, { api, ref: REF });
    await waitFor(() => expect(screen.getAllByTestId('changes-file')).toHaveLength(3));
    const rows = screen.getAllByTestId('changes-file');
    expect(rows.map((r) => `${r.dataset.path}:${r.dataset.status}`)).toEqual(['greet.go:modified', 'notes.md:added', 'old.txt:deleted']);
    expect(rows[0].textContent).toContain('+2');
    expect(rows[0].textContent).toContain('−1');
    expect(screen.getByTestId('changes-branch').textContent).toContain('fleet/fleet-1/build');
    expect(screen.getByTestId('changes-branch').textContent).toContain('main');

    const diff = screen.getByTestId('diff');
    await waitFor(() => expect(diff.querySelectorAll('.d2h-file-wrapper')).toHaveLength(3));
    expect(diff.dataset.format).toBe('line-by-line');
    expect(diff.textContent).toContain('greet says hello to the person.');
    // Highlighted as Go: highlight.js coloured the keywords.
    expect(diff.querySelector('.d2h-file-wrapper[data-file="greet.go"] .hljs-keyword')).not.toBeNull();
    // Every line of every file is a button; a deleted file's lines are on the old side.
    expect(lineNumber('greet.go', 'new', 4).tagName).toBe('BUTTON');
    expect(lineNumber('old.txt', 'old', 1).textContent).toContain('Comment on line 1 (old) of old.txt');

    await fireEvent.click(screen.getByTestId('changes-split'));
    expect(diff.dataset.format).toBe('side-by-side');
    expect(diff.querySelectorAll('.d2h-file-side-diff').length).toBeGreaterThan(0);
    expect(screen.getByTestId('changes-split').getAttribute('aria-pressed')).toBe('true');
    expect(lineNumber('greet.go', 'old', 3)).toBeTruthy();
    view.unmount();

    // The choice outlives the view.
    render(ChangesView, { api, ref: REF });
    await waitFor(() => expect(screen.getByTestId('diff').dataset.format).toBe('side-by-side'));
  });

  it('opens a comment box under a clicked line, saves it as pending, and sends the pending comments to the agent', async () => {
    const { api, named } = server();
    render(ChangesView, { api, ref: REF });
    await waitFor(() => lineNumber('greet.go', 'new', 4));

    await fireEvent.click(lineNumber('greet.go', 'new', 4));
    const box = await screen.findByTestId('line-comment-box');
    // The box is in a row right under its line.
    const row = box.closest('tr')!;
    expect(row.previousElementSibling).toBe(lineNumber('greet.go', 'new', 4).closest('tr'));
    const text = within(box).getByTestId('line-comment-box-text') as HTMLTextAreaElement;
    expect(document.activeElement).toBe(text);
    await fireEvent.input(text, { target: { value: 'Say hello to whom?' } });
    await fireEvent.click(within(box).getByTestId('line-comment-box-save'));

    await waitFor(() => expect(screen.queryByTestId('line-comment-box')).toBeNull());
    expect(named('AddReviewComment')).toEqual([{ ref: REF, file: 'greet.go', line: 4, side: 'new', body: 'Say hello to whom?' }]);
    // Shown under its line, pending, and in the pending list; focus is back on the line number.
    expect(screen.getByTestId('line-comment').textContent).toContain('Say hello to whom?');
    expect(screen.getByTestId('line-comment').dataset.sent).toBe('false');
    expect(document.activeElement).toBe(lineNumber('greet.go', 'new', 4));
    expect(screen.getAllByTestId('pending-comment').map((c) => c.textContent)).toEqual([expect.stringContaining('greet.go:4')]);

    // One on the whole change too.
    const whole = screen.getByTestId('whole-comment-box');
    await fireEvent.input(within(whole).getByTestId('whole-comment-box-text'), { target: { value: 'Add a test.' } });
    await fireEvent.click(within(whole).getByTestId('whole-comment-box-save'));
    await waitFor(() => expect(screen.getAllByTestId('pending-comment')).toHaveLength(2));
    expect(named('AddReviewComment')[1]).toEqual({ ref: REF, file: '', line: 0, side: 'new', body: 'Add a test.' });
    expect(screen.getByTestId('review-send').textContent).toContain('Send to agent (2)');

    await fireEvent.input(screen.getByTestId('review-note'), { target: { value: 'Close, but not yet.' } });
    await fireEvent.click(screen.getByTestId('review-send'));
    await waitFor(() => expect(screen.getByTestId('review-sent').textContent).toContain(`${REF} was reopened`));
    expect(screen.getByTestId('review-sent-feedback').textContent).toContain('say hello to whom?');
    expect(named('SendReview')).toEqual([{ ref: REF, note: 'Close, but not yet.' }]);
    // Sent: nothing pending any more, and the line's comment says so.
    expect(screen.queryAllByTestId('pending-comment')).toHaveLength(0);
    expect(screen.getByTestId('review-send').textContent).toContain('Send to agent (0)');
    expect(screen.getByTestId('line-comment').dataset.sent).toBe('true');
  });

  it('deletes a pending comment, and shows a refused comment’s error inline', async () => {
    let refuse = true;
    const { api, named } = server({
      AddReviewComment: (a) => {
        if (refuse) throw new Error('line: greet.go has no line 99 on the new side: comment on a line the diff shows');
        return { id: 'c1', ref: a.ref, file: a.file, line: a.line, side: a.side, body: a.body, createdAt: '' };
      },
    });
    render(ChangesView, { api, ref: REF });
    await waitFor(() => lineNumber('greet.go', 'new', 1));
    await fireEvent.click(lineNumber('greet.go', 'new', 1));
    const box = await screen.findByTestId('line-comment-box');
    await fireEvent.input(within(box).getByTestId('line-comment-box-text'), { target: { value: 'Why?' } });
    await fireEvent.click(within(box).getByTestId('line-comment-box-save'));
    await waitFor(() => expect(within(box).getByTestId('line-comment-box-error').textContent).toContain('has no line 99'));
    // The text stays for another try.
    expect((within(box).getByTestId('line-comment-box-text') as HTMLTextAreaElement).value).toBe('Why?');

    refuse = false;
    await fireEvent.click(within(box).getByTestId('line-comment-box-save'));
    await waitFor(() => expect(screen.getAllByTestId('pending-comment')).toHaveLength(1));
    await fireEvent.click(screen.getByTestId('pending-delete'));
    await waitFor(() => expect(screen.queryAllByTestId('pending-comment')).toHaveLength(0));
    expect(named('DeleteReviewComment')).toEqual([{ id: 'c1' }]);
    expect(screen.queryByTestId('line-comment')).toBeNull();
  });

  it("shows one file's diff alone, and says when it was cut short", async () => {
    const { api, named } = server({
      GetChanges: (a) => ({
        ref: a.ref,
        kind: 'task',
        branch: 'b',
        base: 'x',
        files: FILES,
        patch: a.file ? filePart(String(a.file)) : patch,
        offset: 0,
        nextOffset: a.file ? 0 : 3,
        truncated: !!a.file,
        ...(a.file ? { truncatedFiles: [a.file] } : {}),
      }),
    });
    render(ChangesView, { api, ref: REF });
    await waitFor(() => expect(screen.getByTestId('changes-more')).toBeTruthy());
    expect(screen.queryByTestId('changes-truncated')).toBeNull();
    await fireEvent.click(screen.getAllByTestId('changes-file')[1]);
    await waitFor(() => expect(screen.getByTestId('diff').querySelectorAll('.d2h-file-wrapper')).toHaveLength(1));
    expect(screen.getByTestId('diff').textContent).toContain('Say hello.');
    expect(screen.getByTestId('changes-truncated').textContent).toContain('too large to show whole: notes.md');
    expect(named('GetChanges').at(-1)).toEqual({ ref: REF, file: 'notes.md' });

    // Back to all files; the next page is asked for from where the first ended.
    await fireEvent.click(screen.getByTestId('changes-all'));
    await fireEvent.click(screen.getByTestId('changes-more'));
    await waitFor(() => expect(named('GetChanges').at(-1)).toEqual({ ref: REF, offset: 3 }));
  });

  it('lands with the remembered strategy and shows a refusal’s detail and that the agent has it back', async () => {
    const { api, named } = server();
    render(ChangesView, { api, ref: REF });
    const merge = (await screen.findByTestId('land-merge')) as HTMLInputElement;
    await waitFor(() => expect(merge.checked).toBe(true));
    expect((screen.getByTestId('land-check') as HTMLInputElement).value).toBe('go test ./...');
    await fireEvent.click(screen.getByTestId('land-button'));
    const outcome = await screen.findByTestId('land-outcome');
    expect(named('Land')).toEqual([{ ref: REF, strategy: 'merge', onRefuse: 'agent' }]);
    expect(outcome.dataset.status).toBe('refused');
    expect(within(outcome).getByTestId('land-detail').tagName).toBe('PRE');
    expect(within(outcome).getByTestId('land-detail').textContent).toContain('Merge conflict in greet.go');
    expect(within(outcome).getByTestId('land-sent-back').textContent).toContain('Sent back to its agent');
    expect(screen.getByTestId('land-note').textContent).toContain('checkout of main');
  });

  it('lands as rebase when picked, and shows the landed commit', async () => {
    const { api, named } = server({
      Land: (a) => ({ outcomes: [{ ref: a.ref, taskId: 'build', status: 'landed', commit: '0123456789abcdef0123' }] }),
    });
    render(ChangesView, { api, ref: REF });
    await waitFor(() => expect((screen.getByTestId('land-merge') as HTMLInputElement).checked).toBe(true));
    await fireEvent.click(screen.getByTestId('land-rebase'));
    await fireEvent.click(screen.getByTestId('land-refuse-person'));
    await fireEvent.click(screen.getByTestId('land-button'));
    expect((await screen.findByTestId('land-commit')).textContent).toBe('0123456789ab');
    expect(named('Land')).toEqual([{ ref: REF, strategy: 'rebase', onRefuse: 'person' }]);
  });

  it('shows the step log of the goal that did the work when opened', async () => {
    const { api, named } = server();
    const task = { id: 'build', goal: 'Build', pane: 'p', goalId: 'goal-7', criterion: { kind: 'manual' }, seq: 1, status: 'completed', createdAt: '' } as FleetTask;
    render(ChangesView, { api, ref: REF, task });
    const log = (await screen.findByTestId('review-steps')) as HTMLDetailsElement;
    expect(named('GoalSteps')).toHaveLength(0);
    log.open = true;
    await fireEvent(log, new Event('toggle'));
    await waitFor(() => expect(screen.getAllByTestId('review-step')).toHaveLength(2));
    expect(named('GoalSteps')).toEqual([{ id: 'goal-7', after: 0, limit: 500 }]);
    expect(screen.getAllByTestId('review-step')[0].textContent).toContain('write_to_terminal');
    expect(screen.getAllByTestId('review-step')[1].textContent).toContain('error: no such file');
  });

  it('sends a repository check typed in, and shows the fleet file’s instead of an input when it has one', async () => {
    const { api, named } = server();
    render(ChangesView, { api, ref: REF });
    const input = (await screen.findByTestId('land-check')) as HTMLInputElement;
    await waitFor(() => expect(input.value).toBe('go test ./...'));
    await fireEvent.input(input, { target: { value: 'make test' } });
    await fireEvent.click(screen.getByTestId('land-button'));
    await screen.findByTestId('land-outcome');
    expect(named('Land')).toEqual([{ ref: REF, strategy: 'merge', onRefuse: 'agent', check: 'make test' }]);

    const fromFile = server({ GetLandPrefs: () => ({ repo: '/src/app', strategy: 'rebase', check: '', onRefuse: 'agent', fileCheck: 'sh check.sh' }) });
    document.body.innerHTML = '';
    render(ChangesView, { api: fromFile.api, ref: REF });
    expect((await screen.findByTestId('land-file-check')).textContent).toContain('sh check.sh');
    expect(screen.queryByTestId('land-check')).toBeNull();
  });

  it('reads the diff again when the work ends again (its tip moved)', async () => {
    const { api, named } = server();
    const task = (commit: string) =>
      ({ id: 'build', goal: 'Build', pane: 'p', criterion: { kind: 'manual' }, seq: 1, status: 'completed', createdAt: '', worktree: { repo: '/r', dir: '/r/w', workDir: '/r/w', branch: 'b', base: 'x', commit } }) as FleetTask;
    const view = render(ChangesView, { api, ref: REF, task: task('aaa') });
    await waitFor(() => expect(screen.getAllByTestId('changes-file')).toHaveLength(3));
    expect(named('GetChanges')).toHaveLength(1);
    // Drawn again with the same work (a fleet event): nothing is read again, the outcome stays.
    await fireEvent.click(screen.getByTestId('land-button'));
    await screen.findByTestId('land-outcome');
    await view.rerender({ task: { ...task('aaa'), status: 'completed' } });
    expect(named('GetChanges')).toHaveLength(1);
    expect(named('GetLandPrefs')).toHaveLength(1);
    expect(screen.getByTestId('land-outcome')).toBeTruthy();
    await view.rerender({ task: task('bbb') });
    await waitFor(() => expect(named('GetChanges')).toHaveLength(2));
    await fireEvent.click(screen.getByTestId('changes-refresh'));
    await waitFor(() => expect(named('GetChanges')).toHaveLength(3));
  });

  it('shows a failed read of the changes inline', async () => {
    const { api } = server({
      GetChanges: () => {
        throw new Error('ref: no task "nope" in fleet fleet-1: give FLEET_ID/TASK_ID of a task with a worktree');
      },
    });
    render(ChangesView, { api, ref: 'fleet-1/nope' });
    expect((await screen.findByTestId('changes-error')).textContent).toContain('no task "nope"');
  });
});
