// Pane agents of the fleets: the Fleet Dashboard's agent cards read them (backend.fleets.agents())
// and set a role and purpose (backend.fleets.setRole()). Their wire types are generated from Go
// (gen/fleet.ts), camelCase like the rest of the wire, so a field renamed in Go fails the type
// check here. This file imports nothing of fleets.ts (no import circle).
import type * as fleet from './gen/fleet';

/** The built-in roles; any other name that reads as a role is the user's own. */
export const AGENT_ROLES = ['Builder', 'Monitor', 'Tester', 'Deployer', 'Reviewer', 'General'] as const;

export type Agent = fleet.Agent;
/** What is stored of an agent (the answer to a role change). */
export type AgentRecord = fleet.AgentRecord;
