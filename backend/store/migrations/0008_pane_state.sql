-- The workspace's focused and maximized pane (the agent reads and changes them as the UI does),
-- and each terminal pane's launch settings (command, arguments, dir, environment; JSON).
ALTER TABLE workspaces ADD COLUMN focused_pane TEXT NOT NULL DEFAULT '';
ALTER TABLE workspaces ADD COLUMN maximized_pane TEXT NOT NULL DEFAULT '';
ALTER TABLE panes ADD COLUMN launch TEXT NOT NULL DEFAULT '';
