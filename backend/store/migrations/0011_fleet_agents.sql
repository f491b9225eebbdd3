-- Placeholder on the chats branch only, so that 0013 applies in sequence: the fleet-core
-- branch's 0011_fleet_agents.sql replaces it when the branches are merged.
SELECT 1;
