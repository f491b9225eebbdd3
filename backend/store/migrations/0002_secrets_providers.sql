-- Secrets (API keys, SSH passwords) and model providers.
-- A secret's value is either in the OS keyring (backend 'keyring', no ciphertext here) or
-- sealed with AES-GCM under the data dir's key file (backend 'file').
CREATE TABLE secrets (
    name       TEXT PRIMARY KEY,
    backend    TEXT    NOT NULL CHECK (backend IN ('keyring', 'file')),
    ciphertext BLOB,
    updated_at INTEGER NOT NULL
);

CREATE TABLE providers (
    id             TEXT PRIMARY KEY,
    name           TEXT    NOT NULL UNIQUE,
    kind           TEXT    NOT NULL CHECK (kind IN ('openai', 'anthropic')),
    base_url       TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    vision_model   TEXT    NOT NULL DEFAULT '',
    temperature    REAL,               -- NULL: the server's default
    max_tokens     INTEGER NOT NULL DEFAULT 0,
    thinking       INTEGER NOT NULL DEFAULT 0,
    context_window INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
