-- Approvals become one mechanism for goals and chats: a request belongs to a goal or to a
-- workspace's chat (exactly one of the two). SQLite cannot relax a NOT NULL column in place,
-- so the table is rebuilt; nothing references it, so its rows move over unchanged.
CREATE TABLE approvals_v7 (
    id            TEXT PRIMARY KEY,
    goal_id       TEXT    REFERENCES goals(id) ON DELETE CASCADE,
    workspace_id  TEXT    REFERENCES workspaces(id) ON DELETE CASCADE,
    call_id       TEXT    NOT NULL,
    tool          TEXT    NOT NULL,
    args          TEXT    NOT NULL,
    risk          TEXT    NOT NULL,
    reason        TEXT    NOT NULL,
    status        TEXT    NOT NULL, -- pending | allow_once | allow_goal | deny
    answer_reason TEXT    NOT NULL DEFAULT '',
    created_at    INTEGER NOT NULL,
    answered_at   INTEGER,
    CHECK ((goal_id IS NULL) <> (workspace_id IS NULL))
);
INSERT INTO approvals_v7(id, goal_id, call_id, tool, args, risk, reason, status, answer_reason, created_at, answered_at)
    SELECT id, goal_id, call_id, tool, args, risk, reason, status, answer_reason, created_at, answered_at FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_v7 RENAME TO approvals;
CREATE INDEX approvals_pending ON approvals(status) WHERE status = 'pending';
