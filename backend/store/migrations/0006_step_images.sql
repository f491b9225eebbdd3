-- The pictures (screenshots) a goal step's result carried, for the dashboard's step log, and
-- how many each step had. They are also in the goal's conversation, but tool call ids are not
-- unique enough to find them there.
ALTER TABLE goal_steps ADD COLUMN images INTEGER NOT NULL DEFAULT 0;

CREATE TABLE goal_step_images (
    goal_id    TEXT    NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
    idx        INTEGER NOT NULL,
    n          INTEGER NOT NULL,
    media_type TEXT    NOT NULL,
    data       BLOB    NOT NULL,
    PRIMARY KEY (goal_id, idx, n)
);
