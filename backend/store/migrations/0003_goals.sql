-- Goals: the goal row (spec and runtime state as JSON), its conversation, its steps, its
-- events (the story the dashboard tells), and approvals asked of the user.
CREATE TABLE goals (
    id         TEXT PRIMARY KEY,
    spec       TEXT    NOT NULL, -- JSON goal.Spec
    status     TEXT    NOT NULL,
    report     TEXT    NOT NULL DEFAULT '',
    state      TEXT    NOT NULL DEFAULT '{}', -- JSON goal.State
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    started_at INTEGER,
    ended_at   INTEGER
);
CREATE INDEX goals_by_status ON goals(status);

CREATE TABLE goal_messages (
    goal_id TEXT    NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    message TEXT    NOT NULL, -- JSON llm.Message
    PRIMARY KEY (goal_id, seq)
);

CREATE TABLE goal_steps (
    goal_id     TEXT    NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    call_id     TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    args        TEXT    NOT NULL,
    result      TEXT    NOT NULL,
    is_error    INTEGER NOT NULL,
    started_at  INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (goal_id, idx)
);

CREATE TABLE goal_events (
    goal_id TEXT    NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    type    TEXT    NOT NULL,
    data    TEXT    NOT NULL,
    at      INTEGER NOT NULL,
    PRIMARY KEY (goal_id, seq)
);

CREATE TABLE approvals (
    id            TEXT PRIMARY KEY,
    goal_id       TEXT    NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
    call_id       TEXT    NOT NULL,
    tool          TEXT    NOT NULL,
    args          TEXT    NOT NULL,
    risk          TEXT    NOT NULL,
    reason        TEXT    NOT NULL,
    status        TEXT    NOT NULL, -- pending | allow_once | allow_goal | deny
    answer_reason TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    answered_at   INTEGER
);
CREATE INDEX approvals_pending ON approvals(status) WHERE status = 'pending';
