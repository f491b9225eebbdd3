// Pane agents of the fleets: the Fleet Dashboard's agent cards read them (backend.fleets.agents())
// and set a role and purpose (backend.fleets.setRole()). Their wire types are generated from Go
// (gen/fleet.ts), whose JSON names are snake_case (the REST route's and the agent tools'); the
// UI reads them camelCased, by types derived from the generated ones, so a field renamed in Go
// still fails the type check here. This file imports nothing of fleets.ts (no import circle).
import type * as fleet from './gen/fleet';

/** The built-in roles; any other name that reads as a role is the user's own. */
export const AGENT_ROLES = ['Builder', 'Monitor', 'Tester', 'Deployer', 'Reviewer', 'General'] as const;

/** snake_case → camelCase, as a type: "cost_usd" is "costUsd". */
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/** A wire type with its keys camelCased, all the way down (arrays and nested objects). */
export type CamelKeys<T> = T extends readonly (infer E)[]
  ? CamelKeys<E>[]
  : T extends object
    ? { [K in keyof T as K extends string ? Camel<K> : K]: CamelKeys<T[K]> }
    : T;

export type AgentStatus = fleet.AgentStatus;
/** A fleet task as an agent's card lists it. */
export type AgentTask = CamelKeys<fleet.AgentTask>;
/** How far the current task's goal has come. */
export type AgentProgress = CamelKeys<fleet.Progress>;
/** Context another agent shared with this one; undelivered items wait for its next turn or task. */
export type AgentInboxItem = CamelKeys<fleet.InboxItem>;
export type Agent = CamelKeys<fleet.Agent>;
/** What is stored of an agent (the answer to a role change). */
export type AgentRecord = CamelKeys<fleet.AgentRecord>;

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The value with its object keys camelCased, all the way down (the agents carry no maps). */
export function camelKeys<T>(value: T): CamelKeys<T> {
  if (Array.isArray(value)) return value.map(camelKeys) as CamelKeys<T>;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), camelKeys(v)])) as CamelKeys<T>;
  }
  return value as CamelKeys<T>;
}
