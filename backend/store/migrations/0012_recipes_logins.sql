-- Placeholder on the chats branch only, so that 0013 applies in sequence: the browserkit
-- branch's 0012_recipes_logins.sql replaces it when the branches are merged.
SELECT 1;
