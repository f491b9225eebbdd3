import { describe, expect, it } from 'vitest';
import { findCycle, layers, layoutGraph, NODE_W } from './graph';

describe('layoutGraph', () => {
  it('puts each task one column right of the deepest task it depends on', () => {
    const d = layers([
      { id: 'build' },
      { id: 'docs' },
      { id: 'test', dependsOn: ['build'] },
      { id: 'ship', dependsOn: ['test', 'docs'] },
    ]);
    expect(Object.fromEntries(d)).toEqual({ build: 0, docs: 0, test: 1, ship: 2 });
  });

  it('draws an edge per dependency, coloured by the dependency state', () => {
    const g = layoutGraph([
      { id: 'a', status: 'completed' },
      { id: 'b', status: 'failed' },
      { id: 'c', status: 'running', dependsOn: ['a'] },
      { id: 'd', status: 'blocked', dependsOn: ['b', 'c'] },
    ]);
    expect(g.edges.map((e) => `${e.from}>${e.to}:${e.state}`)).toEqual(['a>c:done', 'b>d:broken', 'c>d:pending']);
    const a = g.nodes.find((n) => n.id === 'a')!;
    const c = g.nodes.find((n) => n.id === 'c')!;
    expect(c.x).toBeGreaterThan(a.x + NODE_W);
    // The edge leaves the dependency's right side and reaches the dependant's left side.
    expect(g.edges[0].path.startsWith(`M${a.x + NODE_W},`)).toBe(true);
    expect(g.width).toBeGreaterThanOrEqual(Math.max(...g.nodes.map((n) => n.x + NODE_W)));
  });

  it('stacks tasks of one column in file order, and ignores unknown ids', () => {
    const g = layoutGraph([{ id: 'x' }, { id: 'y', dependsOn: ['ghost'] }]);
    expect(g.nodes.map((n) => n.layer)).toEqual([0, 0]);
    expect(g.nodes[1].y).toBeGreaterThan(g.nodes[0].y);
    expect(g.edges).toEqual([]);
  });

  it('survives a cycle (a draft may hold one before it is checked)', () => {
    const tasks = [
      { id: 'a', dependsOn: ['c'] },
      { id: 'b', dependsOn: ['a'] },
      { id: 'c', dependsOn: ['b'] },
    ];
    expect(layoutGraph(tasks).nodes).toHaveLength(3);
    expect(findCycle(tasks)).toEqual(['a', 'c', 'b', 'a']);
    expect(findCycle([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }])).toBeNull();
  });

  it('is empty for no tasks', () => {
    expect(layoutGraph([])).toMatchObject({ nodes: [], edges: [], width: 0, height: 0 });
  });
});
