-- Chat: one conversation per workspace, only ever appended to ("clear conversation" deletes
-- a workspace's rows), and the workspace's chat config (actor–critic mode and settings).
CREATE TABLE chat_messages (
    workspace_id TEXT    NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    role         TEXT    NOT NULL, -- the llm.Message's role: user | assistant | tool
    source       TEXT    NOT NULL CHECK (source IN ('user', 'actor', 'critic', 'note')),
    message      TEXT    NOT NULL, -- JSON llm.Message
    partial      INTEGER NOT NULL DEFAULT 0, -- the stream was cut off: shown, never sent to a model
    created_at   INTEGER NOT NULL, -- unix milliseconds
    PRIMARY KEY (workspace_id, seq)
);

CREATE TABLE chat_state (
    workspace_id    TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    critic_mode     INTEGER NOT NULL DEFAULT 0,
    critic_prompt   TEXT    NOT NULL DEFAULT '',
    provider        TEXT    NOT NULL DEFAULT '',  -- '' = the default provider
    critic_provider TEXT    NOT NULL DEFAULT '',  -- '' = the same model as the actor
    iteration_cap   INTEGER NOT NULL DEFAULT 10,
    ask_above       TEXT    NOT NULL DEFAULT 'write_local' -- a risk name: tools above it ask first
);
