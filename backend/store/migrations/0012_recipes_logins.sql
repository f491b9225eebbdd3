-- Browser recipes: named sequences of browser tool calls with {{param}} placeholders, saved by
-- the agent (browser_save_recipe) or the person, run from the pane menu or browser_run_recipe.
CREATE TABLE browser_recipes (
    name        TEXT PRIMARY KEY,
    description TEXT    NOT NULL DEFAULT '',
    steps       TEXT    NOT NULL, -- JSON: [{"tool": "browser_…", "args": {…}}]
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- Saved logins, one per origin. The password is a secret in the vault (keyring, else sealed
-- with AES-GCM in the secrets table) under secret_name; it is never stored here.
CREATE TABLE saved_logins (
    id          TEXT PRIMARY KEY,
    origin      TEXT    NOT NULL UNIQUE, -- scheme://host[:port]
    username    TEXT    NOT NULL,
    secret_name TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
