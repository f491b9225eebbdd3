-- Chat: several conversations per workspace, each with its own title, persona, skills,
-- provider and model, critic mode and settings (chat_state's columns move here). The one
-- conversation each workspace had becomes its first, with id 'chat-' || workspace id, its
-- messages and settings unchanged. Messages are rebuilt to belong to a conversation; chat
-- approvals name theirs.
CREATE TABLE chat_conversations (
    id              TEXT    PRIMARY KEY,
    workspace_id    TEXT    NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    title           TEXT    NOT NULL DEFAULT '',
    persona         TEXT    NOT NULL DEFAULT '',   -- a catalog persona id; '' = none
    skills          TEXT    NOT NULL DEFAULT '[]', -- JSON array of catalog skill ids
    provider        TEXT    NOT NULL DEFAULT '',   -- '' = the default provider
    model           TEXT    NOT NULL DEFAULT '',   -- '' = the provider's configured model
    critic_mode     INTEGER NOT NULL DEFAULT 0,
    critic_prompt   TEXT    NOT NULL DEFAULT '',
    critic_provider TEXT    NOT NULL DEFAULT '',   -- '' = the same model as the actor
    iteration_cap   INTEGER NOT NULL DEFAULT 10,
    ask_above       TEXT    NOT NULL DEFAULT 'write_local',
    created_at      INTEGER NOT NULL, -- unix milliseconds
    updated_at      INTEGER NOT NULL  -- the last message stored, or the creation
);
CREATE INDEX chat_conversations_workspace ON chat_conversations(workspace_id, updated_at);

INSERT INTO chat_conversations(id, workspace_id, title, provider, critic_mode, critic_prompt, critic_provider,
        iteration_cap, ask_above, created_at, updated_at)
    SELECT 'chat-' || w.id, w.id, 'Chat', COALESCE(s.provider, ''), COALESCE(s.critic_mode, 0),
        COALESCE(s.critic_prompt, ''), COALESCE(s.critic_provider, ''), COALESCE(s.iteration_cap, 10),
        COALESCE(s.ask_above, 'write_local'),
        COALESCE((SELECT MIN(m.created_at) FROM chat_messages m WHERE m.workspace_id = w.id), w.created_at),
        COALESCE((SELECT MAX(m.created_at) FROM chat_messages m WHERE m.workspace_id = w.id), w.created_at)
    FROM workspaces w LEFT JOIN chat_state s ON s.workspace_id = w.id
    WHERE s.workspace_id IS NOT NULL OR EXISTS (SELECT 1 FROM chat_messages m WHERE m.workspace_id = w.id);

CREATE TABLE chat_messages_v13 (
    conversation_id TEXT    NOT NULL REFERENCES chat_conversations(id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    role            TEXT    NOT NULL, -- the llm.Message's role: user | assistant | tool
    source          TEXT    NOT NULL CHECK (source IN ('user', 'actor', 'critic', 'note')),
    message         TEXT    NOT NULL, -- JSON llm.Message
    partial         INTEGER NOT NULL DEFAULT 0, -- the stream was cut off: shown, never sent to a model
    created_at      INTEGER NOT NULL, -- unix milliseconds
    PRIMARY KEY (conversation_id, seq)
);
INSERT INTO chat_messages_v13(conversation_id, seq, role, source, message, partial, created_at)
    SELECT 'chat-' || workspace_id, seq, role, source, message, partial, created_at FROM chat_messages;
DROP TABLE chat_messages;
ALTER TABLE chat_messages_v13 RENAME TO chat_messages;
DROP TABLE chat_state;

ALTER TABLE approvals ADD COLUMN conversation_id TEXT;
