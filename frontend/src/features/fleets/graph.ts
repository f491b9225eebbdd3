// The dependency graph of a fleet, laid out for an SVG: one column per depth (a task sits one
// column right of the deepest task it depends on), tasks in a column in their file order.

/** What the layout needs of a task; a fleet's tasks and the Composer's drafts both fit. */
export interface GraphTask {
  id: string;
  dependsOn?: readonly string[];
  status?: string;
}

export interface GraphNode {
  id: string;
  status: string;
  /** The column: 0 for a task that depends on nothing. */
  layer: number;
  x: number;
  y: number;
}

/** An edge from a dependency to the task that waits for it. */
export interface GraphEdge {
  from: string;
  to: string;
  /** done: the dependency completed; broken: it failed, was aborted or is blocked; else pending. */
  state: 'done' | 'broken' | 'pending';
  /** The SVG path, from the dependency's right side to the dependant's left. */
  path: string;
}

export interface GraphLayout {
  nodes: GraphNode[];
  edges: GraphEdge[];
  width: number;
  height: number;
}

/** Sizes in CSS pixels. */
export const NODE_W = 156;
export const NODE_H = 46;
const GAP_X = 56;
const GAP_Y = 14;
const PAD = 8;

const BROKEN = ['failed', 'aborted', 'blocked'];

/**
 * A dependency cycle among the tasks, as the ids around it (first repeated last), or null.
 * Unknown ids are ignored here: the Composer names them separately.
 */
export function findCycle(tasks: readonly GraphTask[]): string[] | null {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const state = new Map<string, 'path' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    state.set(id, 'path');
    path.push(id);
    for (const d of byId.get(id)?.dependsOn ?? []) {
      if (!byId.has(d)) continue;
      if (state.get(d) === 'path') return [...path.slice(path.indexOf(d)), d];
      if (!state.has(d)) {
        const c = visit(d);
        if (c) return c;
      }
    }
    path.pop();
    state.set(id, 'done');
    return null;
  };
  for (const t of tasks) {
    if (!state.has(t.id)) {
      const c = visit(t.id);
      if (c) return c;
    }
  }
  return null;
}

/** Each task's column: the longest chain of dependencies below it (a cycle is cut, not followed). */
export function layers(tasks: readonly GraphTask[]): Map<string, number> {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const depth = new Map<string, number>();
  const onPath = new Set<string>();
  const deep = (id: string): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (onPath.has(id)) return 0;
    onPath.add(id);
    let d = 0;
    for (const dep of byId.get(id)?.dependsOn ?? []) {
      if (byId.has(dep) && dep !== id) d = Math.max(d, deep(dep) + 1);
    }
    onPath.delete(id);
    depth.set(id, d);
    return d;
  };
  for (const t of tasks) deep(t.id);
  return depth;
}

export function layoutGraph(tasks: readonly GraphTask[]): GraphLayout {
  const depth = layers(tasks);
  const rows = new Map<number, number>();
  const nodes: GraphNode[] = tasks.map((t) => {
    const layer = depth.get(t.id) ?? 0;
    const row = rows.get(layer) ?? 0;
    rows.set(layer, row + 1);
    return { id: t.id, status: t.status ?? 'waiting', layer, x: PAD + layer * (NODE_W + GAP_X), y: PAD + row * (NODE_H + GAP_Y) };
  });
  const at = new Map(nodes.map((n) => [n.id, n]));
  const edges: GraphEdge[] = [];
  for (const t of tasks) {
    const to = at.get(t.id)!;
    for (const d of t.dependsOn ?? []) {
      const from = at.get(d);
      if (!from || d === t.id) continue;
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x;
      const y2 = to.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      edges.push({
        from: d,
        to: t.id,
        state: from.status === 'completed' ? 'done' : BROKEN.includes(from.status) ? 'broken' : 'pending',
        path: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
      });
    }
  }
  const cols = Math.max(0, ...nodes.map((n) => n.layer)) + 1;
  const maxRows = Math.max(1, ...rows.values());
  return {
    nodes,
    edges,
    width: nodes.length ? PAD * 2 + cols * NODE_W + (cols - 1) * GAP_X : 0,
    height: nodes.length ? PAD * 2 + maxRows * NODE_H + (maxRows - 1) * GAP_Y : 0,
  };
}
