// A node's versions are read a page at a time, with other requests given turns between pages: a node
// that CI publishes to on every commit holds thousands, with long changelogs, and one read of them all
// held the event loop for everyone (docs/decisions.md). Both stores read them this way.
import { yieldEvery } from '../turns.js';

/** Versions read by one query. */
export const VERSIONS_PAGE = 200;
/** How long the reads hold the event loop at most before other requests get a turn. */
const YIELD_EVERY_MS = 10;
/** Reads started again when a write moved the versions meanwhile, before one read of them all. */
const READ_ATTEMPTS = 3;

/** The reads a store gives `readVersionsInPages`, each of one node's versions. */
export interface VersionPageReads<R> {
  /** The node's versions generation: it moves with every write to one of its versions. */
  generation(): Promise<unknown>;
  /** The ids of the versions, highest first. */
  orderedIds(): Promise<string[]>;
  /** The rows of these ids, in any order. */
  rows(ids: string[]): Promise<R[]>;
  /** Every version at once, highest first: the last resort when writes keep moving them. */
  all(): Promise<R[]>;
}

/**
 * The versions of one moment, highest first: their ids in order, then the rows a page at a time. A
 * write to the node's versions meanwhile (its generation moves) starts the read again; after a few
 * such writes they are read at once.
 */
export async function readVersionsInPages<R extends { id: string }>(reads: VersionPageReads<R>): Promise<R[]> {
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    const before = await reads.generation();
    const ids = await reads.orderedIds();
    const byId = new Map<string, R>();
    const yieldIfDue = yieldEvery(YIELD_EVERY_MS);
    for (let at = 0; at < ids.length; at += VERSIONS_PAGE) {
      if (at) await yieldIfDue();
      for (const row of await reads.rows(ids.slice(at, at + VERSIONS_PAGE))) byId.set(row.id, row);
    }
    const listed = ids.flatMap((id) => byId.get(id) ?? []);
    // a version deleted between the ids and its page is a write too: its generation moved
    if ((await reads.generation()) === before && listed.length === ids.length) return listed;
  }
  return reads.all();
}
