/**
 * Lists the backend sends both as pushed snapshots and as the answers to our own calls, which
 * may arrive in either order: an item is only replaced by a version whose updatedAt is not older.
 * Used by the provider, SSH server and workspace stores.
 */
export interface Versioned {
  id: string;
  updatedAt: string;
}

/** The incoming version unless the one we hold is strictly newer. */
export function newer<T extends Versioned>(held: T | undefined, incoming: T): T {
  if (!held) return incoming;
  const a = Date.parse(held.updatedAt);
  const b = Date.parse(incoming.updatedAt);
  return a > b ? held : incoming; // NaN compares false: an unparseable time never blocks an update
}

/** A whole list just received: membership and order come from it; no item goes back in time. */
export function mergeList<T extends Versioned>(held: readonly T[], incoming: readonly T[]): T[] {
  const current = new Map(held.map((x) => [x.id, x]));
  return incoming.map((x) => newer(current.get(x.id), x));
}

/**
 * The list with one item a call returned in place of the version held, unless that is newer.
 * The same list (unchanged, so nothing redraws) when the item is not in it or is not newer.
 */
export function withNewer<T extends Versioned>(list: T[], item: T): T[] {
  const i = list.findIndex((x) => x.id === item.id);
  if (i === -1) return list;
  const kept = newer(list[i], item);
  if (kept === list[i]) return list;
  const next = list.slice();
  next[i] = kept;
  return next;
}
