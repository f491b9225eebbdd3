-- Fleets: named sets of tasks, each run as a goal once the tasks it depends on verified
-- complete. spec holds the fleet's run template (concurrency, policy, settings) as JSON; a
-- task's spec its goal, pane, role, priority, dependencies and criterion.
CREATE TABLE fleets (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    status     TEXT NOT NULL,
    spec       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE fleet_tasks (
    fleet_id   TEXT NOT NULL REFERENCES fleets(id) ON DELETE CASCADE,
    task_id    TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    spec       TEXT NOT NULL,
    status     TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT '',
    goal_id    TEXT NOT NULL DEFAULT '',
    report     TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    ended_at   INTEGER,
    PRIMARY KEY (fleet_id, task_id)
);
