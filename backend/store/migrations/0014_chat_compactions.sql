-- Chat: each conversation's compaction per side (the actor's, the critic's) — how its history
-- is sent since it outgrew the model's window: agent.Compaction as JSON, its summary included.
-- Kept so that an app started again sends the same request the last one would have (the
-- provider's prompt cache holds) instead of paying for a new summary. A table of its own, not
-- columns of chat_conversations: that row is read for every list and every turn, and the
-- summary runs to kilobytes. It goes with the conversation's messages (cleared in the same
-- transaction) and with the conversation (the foreign key).
CREATE TABLE chat_compactions (
    conversation_id TEXT    NOT NULL REFERENCES chat_conversations(id) ON DELETE CASCADE,
    source          TEXT    NOT NULL CHECK (source IN ('actor', 'critic')),
    compaction      TEXT    NOT NULL, -- JSON agent.Compaction
    updated_at      INTEGER NOT NULL, -- unix milliseconds
    PRIMARY KEY (conversation_id, source)
);
