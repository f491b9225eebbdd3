// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { Backend, BackendEvent, InboxItem, Workspace } from '../../lib/api';
import { createAppContext } from '../../lib/state/context';
import { COMMAND, commandForKey, KEYMAP } from '../../lib/state/keymap';
import StatusBar from '../workspace/StatusBar.svelte';
import { InboxStore, nextAfter } from './inbox.svelte';
import InboxPanel from './InboxPanel.svelte';
import Harness from './InboxHarness.test.svelte';
import { jumpNext } from './jump';

function item(id: string, kind: InboxItem['kind'], urgency: number, since: string, over: Partial<InboxItem> = {}): InboxItem {
  return { id, kind, urgency, title: id, detail: '', workspaceId: '', paneId: '', goalId: '', fleetId: '', taskId: '', approvalId: '', since, ...over };
}

const approval = item('approval:a1', 'approval', 0, '2026-01-01T10:00:00Z', { workspaceId: 'w1', paneId: 'p1', goalId: 'g1', approvalId: 'a1', title: 'Approve run_command' });
const blocked = item('task_blocked:f1/b', 'task_blocked', 1, '2026-01-01T10:01:00Z', { fleetId: 'f1', taskId: 'b', title: 'Task blocked: build / b' });
const idle = item('agent_idle:p2', 'agent_idle', 4, '2026-01-01T10:02:00Z', { workspaceId: 'w2', paneId: 'p2', title: 'Idle at its prompt: py' });

function ws(id: string, panes: string[]): Workspace {
  return {
    id,
    name: id.toUpperCase(),
    position: 0,
    rows: 1,
    cols: panes.length,
    rowWeights: [1],
    colWeights: panes.map(() => 1),
    panes: panes.map((p, i) => ({ id: p, kind: 'terminal', label: p, row: 0, col: i })),
    focusedPaneId: '',
    maximizedPaneId: '',
    createdAt: '',
    updatedAt: '',
  } as Workspace;
}

/** An app context over a backend whose inbox lists items, with two workspaces; emit pushes events. */
function setup(items: InboxItem[]) {
  let handler: (e: BackendEvent) => void = () => {};
  const backend = {
    kind: 'web',
    inbox: { list: vi.fn(async () => items) },
    subscribe: (h: (e: BackendEvent) => void) => ((handler = h), () => {}),
    activateWorkspace: vi.fn(async () => {}),
    focusPane: vi.fn(async (wsId: string) => ws(wsId, [])),
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.workspaces.workspaces = [ws('w1', ['p1']), ws('w2', ['p2'])];
  ctx.workspaces.activeId = 'w1';
  return { ctx, backend, emit: (e: BackendEvent) => handler(e) };
}

describe('InboxStore', () => {
  it('reads the list, takes the pushed one whole, and tells of new items (not approvals) with a click that lands on them', async () => {
    const notify = vi.fn();
    let handler: (e: BackendEvent) => void = () => {};
    const backend = { inbox: { list: async () => [approval] }, subscribe: (h: typeof handler) => ((handler = h), () => {}) } as unknown as Backend;
    const store = new InboxStore(backend, notify);
    store.sync();
    await store.load();
    expect(store.items.map((i) => i.id)).toEqual(['approval:a1']);
    expect(notify).not.toHaveBeenCalled();

    const landed: InboxItem[] = [];
    store.land = (it) => landed.push(it);
    handler({ topic: 'inbox', type: 'changed', data: { items: [approval, blocked, { id: 'x', kind: 'unknown' }] } });
    expect(store.items.map((i) => i.id)).toEqual(['approval:a1', 'task_blocked:f1/b']);
    expect(notify).toHaveBeenCalledTimes(1);
    expect(notify.mock.calls[0][0]).toBe('Task blocked: build / b');
    notify.mock.calls[0][2]();
    expect(landed.map((i) => i.id)).toEqual(['task_blocked:f1/b']);

    handler({ topic: 'goals', type: 'changed', data: { items: [] } });
    expect(store.items).toHaveLength(2);

    // A click on the desktop window's notification arrives as inbox/open with its item.
    handler({ topic: 'inbox', type: 'open', data: idle });
    expect(landed.map((i) => i.id)).toEqual(['task_blocked:f1/b', 'agent_idle:p2']);
  });

  it('walks the list in order from the item reached last, even when that one has left it, and wraps', () => {
    const list = [approval, blocked, idle];
    expect(nextAfter(list, null)).toBe(approval);
    expect(nextAfter(list, approval)).toBe(blocked);
    expect(nextAfter(list, idle)).toBe(approval);
    // The approval was answered: the next press still goes on from where it was.
    expect(nextAfter([blocked, idle], approval)).toBe(blocked);
    expect(nextAfter([approval, idle], blocked)).toBe(idle);
    expect(nextAfter([], approval)).toBeUndefined();
  });
});

describe('the inbox key', () => {
  it('is Ctrl+Shift+L, in a terminal too', () => {
    const key = { key: 'L', code: 'KeyL', ctrlKey: true, shiftKey: true, altKey: false, metaKey: false };
    expect(commandForKey(key, KEYMAP, () => true)).toBe(COMMAND.inboxNext);
    expect(KEYMAP.filter((b) => b.keys === 'Ctrl+Shift+L')).toHaveLength(1);
  });

  it('reaches each item in turn: the approval asked again in its pane, the task without a pane in the Fleet Dashboard, the idle pane in its workspace', async () => {
    const { ctx } = setup([approval, blocked, idle]);
    await ctx.inbox.load();
    const recall = vi.spyOn(ctx.goals, 'recall');
    const defer = vi.spyOn(ctx.goals, 'defer');
    const focus = vi.spyOn(ctx.panes, 'focus');
    const activate = vi.spyOn(ctx.workspaces, 'activate');

    jumpNext(ctx);
    await vi.waitFor(() => expect(recall).toHaveBeenCalledWith('g1'));
    expect(focus).toHaveBeenLastCalledWith('w1', 'p1');
    expect(activate).not.toHaveBeenCalled();

    jumpNext(ctx);
    await vi.waitFor(() => expect(ctx.fleets.open).toBe(true));
    expect(ctx.fleets.selectedId).toBe('f1');
    expect(defer).toHaveBeenCalledWith('a1'); // gone on from: put off, as its Later does

    jumpNext(ctx);
    await vi.waitFor(() => expect(activate).toHaveBeenCalledWith('w2'));
    expect(focus).toHaveBeenLastCalledWith('w2', 'p2');
    expect(ctx.fleets.open).toBe(false);
    await vi.waitFor(() => expect(ctx.workspaces.activeId).toBe('w2'));

    jumpNext(ctx); // back to the first
    await vi.waitFor(() => expect(activate).toHaveBeenLastCalledWith('w1'));
  });

  it('opens the Fleet Dashboard on the fleet of work ready to land, over its pane', async () => {
    const review = item('review:f2/c', 'review', 2, '2026-01-01T10:03:00Z', { fleetId: 'f2', taskId: 'c', workspaceId: 'w1', paneId: 'p1' });
    const { ctx } = setup([review]);
    await ctx.inbox.load();
    jumpNext(ctx);
    await vi.waitFor(() => expect(ctx.fleets.open).toBe(true));
    expect(ctx.fleets.selectedId).toBe('f2');
  });
});

describe('InboxPanel and the status bar', () => {
  it('counts the items in the status bar, lists them most urgent first, moves with the arrows and goes to one with Enter', async () => {
    const { ctx } = setup([approval, blocked, idle]);
    await ctx.inbox.load();
    render(Harness, { ctx, component: StatusBar });
    const count = screen.getByTestId('status-inbox');
    expect(count.textContent).toContain('inbox: 3');
    await fireEvent.click(count);
    expect(ctx.inbox.open).toBe(true);

    render(Harness, { ctx, component: InboxPanel, with: { onclose: () => (ctx.inbox.open = false) } });
    const rows = screen.getAllByTestId('inbox-item');
    expect(rows.map((r) => r.dataset.kind)).toEqual(['approval', 'task_blocked', 'agent_idle']);
    expect(rows[0].textContent).toContain('Approval');
    expect(rows[0].textContent).toContain('W1');
    await vi.waitFor(() => expect(document.activeElement).toBe(rows[0]));
    await fireEvent.keyDown(rows[0], { key: 'ArrowDown' });
    await fireEvent.keyDown(rows[1], { key: 'ArrowDown' });
    expect(document.activeElement).toBe(rows[2]);
    await fireEvent.keyDown(rows[2], { key: 'ArrowDown' });
    expect(document.activeElement).toBe(rows[2]);

    const activate = vi.spyOn(ctx.workspaces, 'activate');
    await fireEvent.click(rows[2]); // Enter on a button clicks it
    await vi.waitFor(() => expect(activate).toHaveBeenCalledWith('w2'));
    expect(ctx.inbox.open).toBe(false);
    expect(ctx.inbox.last?.id).toBe('agent_idle:p2');
  });

  it('says so when nothing waits', async () => {
    const { ctx } = setup([]);
    await ctx.inbox.load();
    render(Harness, { ctx, component: InboxPanel, with: { onclose: () => {} } });
    expect(screen.getByTestId('inbox-empty').textContent).toBe('Nothing waits for you.');
    expect(screen.getByTestId('inbox-panel-count').textContent).toBe('0 waiting');
  });
});
