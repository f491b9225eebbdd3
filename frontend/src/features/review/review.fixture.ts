// A fake server for the review's tests: HttpBackend (the real call table) over a fetch that
// answers the review calls from memory, with a diff git wrote (testdata/changes.patch).
import { vi } from 'vitest';
import type { ChangedFile, ReviewComment } from '../../lib/api';
import { signedInHttp } from '../../lib/api/transports.fixture';
import patch from './testdata/changes.patch?raw';

export { patch };
export const REF = 'fleet-1/build';

export const FILES: ChangedFile[] = [
  { path: 'greet.go', status: 'modified', added: 2, removed: 1 },
  { path: 'notes.md', status: 'added', added: 2, removed: 0 },
  { path: 'old.txt', status: 'deleted', added: 0, removed: 1 },
];

/** One file's part of the patch, as GetChanges with `file` answers. */
export function filePart(file: string): string {
  const parts = patch.split(/(?=^diff --git )/m);
  return parts.find((p) => p.startsWith(`diff --git a/${file} `)) ?? '';
}

export type Handler = (args: Record<string, unknown>) => unknown;

/** A server holding the review's comments; `over` replaces a call's answer (a throw refuses it). */
export function server(over: Record<string, Handler> = {}) {
  const sent: [string, Record<string, unknown>][] = [];
  let comments: ReviewComment[] = [];
  let n = 0;
  const calls: Record<string, Handler> = {
    GetChanges: (a) => ({
      ref: a.ref,
      kind: 'task',
      branch: 'fleet/fleet-1/build',
      base: 'ba47f32c0ffee',
      target: 'main',
      tip: 'a77ca87beef00',
      files: FILES,
      patch: a.file ? filePart(String(a.file)) : patch,
      offset: 0,
      nextOffset: 0,
      truncated: false,
    }),
    ListReviewComments: () => ({ comments }),
    AddReviewComment: (a) => {
      const c = { id: `c${++n}`, ref: a.ref, file: a.file, line: a.line, side: a.side, body: a.body, createdAt: '2026-11-27T10:00:00Z' } as ReviewComment;
      comments = [...comments, c];
      return c;
    },
    DeleteReviewComment: (a) => {
      comments = comments.filter((c) => c.id !== a.id);
      return undefined;
    },
    SendReview: () => {
      comments = comments.map((c) => ({ ...c, sentAt: '2026-11-27T10:01:00Z' }));
      return { reopened: REF, feedback: 'greet.go:4: say hello to whom?' };
    },
    GetLandPrefs: () => ({ repo: '/src/app', strategy: 'merge', check: 'go test ./...', onRefuse: 'agent' }),
    GoalSteps: (a) => ({
      steps: [
        { goalId: a.id, index: 1, callId: 'c1', tool: 'write_to_terminal', args: { pane_id: 'p', text: 'go build' }, result: 'built', isError: false, startedAt: '', durationMs: 5, images: 0 },
        { goalId: a.id, index: 2, callId: 'c2', tool: 'read_file', args: { path: 'x' }, result: 'no such file', isError: true, startedAt: '', durationMs: 1, images: 0 },
      ],
    }),
    Land: (a) => ({
      outcomes: [{ ref: a.ref, taskId: 'build', status: 'refused', detail: 'CONFLICT (content): Merge conflict in greet.go\n<<<<<<< main', sentBack: true }],
      strategy: a.strategy,
      check: 'go test ./...',
      onRefuse: a.onRefuse,
      note: 'Your checkout of main was left as it was: run git reset --hard to see the work.',
    }),
    ...over,
  };
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    const name = String(url).slice('/api/rpc/'.length);
    const args = init?.body ? (JSON.parse(String(init.body)) as Record<string, unknown>) : {};
    sent.push([name, args]);
    const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
    const handler = calls[name];
    if (!handler) return json(404, { error: `${name} is not a call of the table` });
    try {
      const body = handler(args);
      return body === undefined ? new Response(null, { status: 204 }) : json(200, body);
    } catch (err) {
      return json(400, { error: (err as Error).message });
    }
  });
  const backend = signedInHttp(fetch);
  const named = (name: string) => sent.filter(([n]) => n === name).map(([, a]) => a);
  return { backend, api: backend.review, sent, named };
}

