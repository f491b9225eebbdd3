-- The agent of a pane, as fleets use it: its role (Builder, Tester, … or the user's own), its
-- purpose and its inbox of shared context (JSON list; items not yet delivered go into the
-- first prompt of the next task started there). Status, current task, queue, history and
-- progress are read from the fleets' tasks and their goals, so they cannot disagree.
CREATE TABLE fleet_agents (
    pane_id    TEXT PRIMARY KEY,
    role       TEXT NOT NULL DEFAULT '',
    purpose    TEXT NOT NULL DEFAULT '',
    inbox      TEXT NOT NULL DEFAULT '[]',
    updated_at INTEGER NOT NULL
);

-- A task isolated in its own git worktree: the worktree, its branch, the commit it started
-- from and, once it ended, its diff stat (JSON; '' for a task without isolation).
ALTER TABLE fleet_tasks ADD COLUMN worktree TEXT NOT NULL DEFAULT '';
