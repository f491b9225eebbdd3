-- Saved SSH servers for terminal panes. A password, if any, is a secret in the vault.
CREATE TABLE ssh_servers (
    id         TEXT PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    host       TEXT    NOT NULL,
    port       INTEGER NOT NULL DEFAULT 0, -- 0: ssh's default (22 or ~/.ssh/config)
    user       TEXT    NOT NULL DEFAULT '',
    key_path   TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
