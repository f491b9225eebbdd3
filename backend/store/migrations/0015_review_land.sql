-- Review and land. A task's review: where its work stands with its target (landed or
-- refused), the feedback its next run starts with, and its story of landings, refusals and
-- reviews, as JSON.
ALTER TABLE fleet_tasks ADD COLUMN review TEXT NOT NULL DEFAULT '';

-- What a person remembers per repository about landing: rebase or merge, the repository's
-- own check run on the result before the target moves, and where refused work goes (back to
-- its agent, or to the person).
CREATE TABLE land_prefs (
    repo       TEXT PRIMARY KEY,
    strategy   TEXT NOT NULL DEFAULT '',
    check_cmd  TEXT NOT NULL DEFAULT '',
    on_refuse  TEXT NOT NULL DEFAULT '',
    updated_at INTEGER NOT NULL
);

-- Review comments on a change (a fleet task's or a goal's branch), kept until they are sent
-- to its agent. subject is "FLEET/TASK" or a goal id; file and line are empty and 0 for a
-- comment on the whole change; side is "new" or "old" (which side of the diff the line is on).
CREATE TABLE review_comments (
    id         TEXT PRIMARY KEY,
    subject    TEXT NOT NULL,
    file       TEXT NOT NULL DEFAULT '',
    line       INTEGER NOT NULL DEFAULT 0,
    side       TEXT NOT NULL DEFAULT 'new',
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    sent_at    INTEGER
);
CREATE INDEX review_comments_subject ON review_comments(subject, created_at);
