// The review's and landing's calls on both transports: the names and arguments the table
// takes, and what the UI reads of the answers (reopened names the work, truncated files).
import { describe, expect, it } from 'vitest';
import { bothDoors, type Answers } from './transports.fixture';

const answers: Answers = {
  GetChanges: {
    ref: 'f/a',
    kind: 'task',
    branch: 'fleet/f/a',
    base: 'b0',
    tip: 't1',
    files: [{ path: 'a.go', status: 'modified', added: 1, removed: 0 }],
    patch: 'diff --git a/a.go b/a.go\n',
    offset: 0,
    nextOffset: 0,
    truncated: true,
    truncatedFiles: ['a.go'],
  },
  ListReviewComments: { comments: [{ id: 'c1', ref: 'f/a', file: 'a.go', line: 3, side: 'new', body: 'why?', createdAt: '' }] },
  AddReviewComment: { id: 'c2', ref: 'f/a', file: '', line: 0, side: 'new', body: 'all of it', createdAt: '' },
  SendReview: { reopened: 'f/a', feedback: 'a.go:3: why?' },
  Land: { outcomes: [{ ref: 'f/a', taskId: 'a', status: 'landed', commit: 'c0ffee', sentBack: false }], strategy: 'rebase', check: '', onRefuse: 'agent' },
  GetLandPrefs: { repo: '/r', strategy: 'merge', check: 'make test', onRefuse: 'person', fileCheck: 'sh check.sh' },
  GoalSteps: { steps: [{ goalId: 'g1', index: 1, callId: 'c', tool: 'write_to_terminal', args: { text: 'ls' }, result: 'ok', isError: false, startedAt: '', durationMs: 3, images: 0 }] },
};

describe('backend.review', () => {
  it('sends the calls as the table names them and reads their answers, alike on both doors', async () => {
    for (const { api, sent } of bothDoors(answers)) {
      const page = await api.review.changes('f/a', { file: 'a.go' });
      expect(page).toMatchObject({ branch: 'fleet/f/a', truncated: true, truncatedFiles: ['a.go'] });
      expect((await api.review.comments('f/a'))[0].body).toBe('why?');
      expect((await api.review.addComment({ ref: 'f/a', file: '', line: 0, side: 'new', body: 'all of it' })).id).toBe('c2');
      await api.review.deleteComment('c1');
      expect(await api.review.send('f/a', 'and rebase')).toEqual({ reopened: 'f/a', feedback: 'a.go:3: why?' });
      expect((await api.review.land('f', { strategy: 'merge', onRefuse: 'person' })).outcomes[0].commit).toBe('c0ffee');
      expect(await api.review.landPrefs('f')).toEqual({ repo: '/r', strategy: 'merge', check: 'make test', onRefuse: 'person', fileCheck: 'sh check.sh' });
      expect((await api.review.steps('g1'))[0].tool).toBe('write_to_terminal');
      expect(sent()).toEqual([
        ['GetChanges', { ref: 'f/a', file: 'a.go' }],
        ['ListReviewComments', { ref: 'f/a' }],
        ['AddReviewComment', { ref: 'f/a', file: '', line: 0, side: 'new', body: 'all of it' }],
        ['DeleteReviewComment', { id: 'c1' }],
        ['SendReview', { ref: 'f/a', note: 'and rebase' }],
        ['Land', { ref: 'f', strategy: 'merge', onRefuse: 'person' }],
        ['GetLandPrefs', { ref: 'f' }],
        ['GoalSteps', { id: 'g1', after: 0, limit: 500 }],
      ]);
    }
  });
});
