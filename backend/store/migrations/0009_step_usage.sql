-- The tokens of the model turn that asked for a step (on the first step of its batch), cached
-- and uncached input apart, as JSON; '' for the other steps and for steps stored before.
ALTER TABLE goal_steps ADD COLUMN usage TEXT NOT NULL DEFAULT '';
