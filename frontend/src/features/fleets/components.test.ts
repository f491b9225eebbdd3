// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { FleetTask } from '../../lib/api';
import { normalizeGoal } from '../../lib/api';
import FleetGraph from './FleetGraph.svelte';
import TaskCard from './TaskCard.svelte';

function task(over: Partial<FleetTask>): FleetTask {
  return { id: 't', goal: 'Do it', pane: 't-term', criterion: { kind: 'manual' }, seq: 1, status: 'waiting', createdAt: '', ...over };
}

describe('TaskCard', () => {
  it("shows a blocked task's reason, and a running task's goal progress, steps and cost", async () => {
    const ontoggle = vi.fn();
    const blocked = render(TaskCard, {
      task: task({ id: 'test', role: 'Tester', status: 'blocked', reason: 'task build, which it depends on, failed: no gcc', dependsOn: ['build'] }),
      goal: undefined,
      checked: false,
      ontoggle,
      onopengoal: () => {},
    });
    expect(screen.getByTestId('task-reason').textContent).toContain('no gcc');
    expect(screen.getByTestId('task-role').textContent).toBe('Tester');
    await fireEvent.click(screen.getByTestId('task-select'));
    expect(ontoggle).toHaveBeenCalledWith(true);
    blocked.unmount();

    const goal = normalizeGoal({ id: 'g', status: 'paused', state: { steps: 4, costUsd: 0.5, todos: [{ text: 'a', done: true }, { text: 'b', done: false }] } });
    const onopengoal = vi.fn();
    render(TaskCard, { task: task({ status: 'running', goalId: 'g' }), goal, checked: true, ontoggle, onopengoal });
    expect(screen.getByTestId('task-steps').textContent).toBe('4');
    expect(screen.getByTestId('task-cost').textContent).toContain('0.5');
    expect(screen.getByTestId('task-progress').textContent).toContain('1 of 2');
    expect(screen.getByTestId('task-goal-status').textContent).toContain('paused');
    expect(screen.queryByTestId('task-reason')).toBeNull();
    await fireEvent.click(screen.getByTestId('task-open-goal'));
    expect(onopengoal).toHaveBeenCalledWith('g');
  });
});

describe('FleetGraph', () => {
  it('draws each task with its state, and an edge per dependency', async () => {
    const onpick = vi.fn();
    render(FleetGraph, {
      tasks: [
        { id: 'build', status: 'completed' },
        { id: 'test', status: 'running', dependsOn: ['build'] },
      ],
      onpick,
    });
    const nodes = screen.getAllByTestId('graph-node');
    expect(nodes.map((n) => `${n.dataset.task}:${n.dataset.status}`)).toEqual(['build:completed', 'test:running']);
    const edge = screen.getByTestId('graph-edge');
    expect([edge.dataset.from, edge.dataset.to, edge.dataset.state]).toEqual(['build', 'test', 'done']);
    await fireEvent.click(nodes[1]);
    expect(onpick).toHaveBeenCalledWith('test');
  });
});
