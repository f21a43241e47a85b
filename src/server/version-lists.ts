// The serialised answer of `GET /nodes/{id}/versions` without findings (the same for every caller),
// kept per node while the node's versions generation is the one it was built at, as node-answers.ts
// keeps the node's: every write to a version moves it (migration 'version-order'), a download does
// not, so counting downloads does not drop the kept lists. A node with thousands of versions answers
// megabytes whose build costs CPU for every version, which one
// anonymous client could ask for again and again. CI pipelines that publish on every commit make such
// nodes, and each publish makes the next read build the list again: it is built in turns
// (`serialiseInTurns`, and the stores read the rows in pages: store/version-pages.ts), and requests that ask for it
// while it is built share that build.
import type { NodeRow } from './store/registry-store.js';
import { yieldEvery } from './turns.js';

/** The bytes of the bodies kept, all together, at most: the least recently used go first. */
const MAX_KEPT = 64 * 1024 * 1024;
/** How long a list's build holds the event loop at most before other requests get a turn. */
const YIELD_EVERY_MS = 10;

/** `JSON.stringify(rows.map(view))` as UTF-8, the same bytes, made row by row with turns between rows. */
export async function serialiseInTurns<T>(
  rows: readonly T[],
  view: (row: T) => unknown,
): Promise<Uint8Array<ArrayBuffer>> {
  const yieldIfDue = yieldEvery(YIELD_EVERY_MS);
  const parts = [Buffer.from('[')];
  for (const row of rows) {
    await yieldIfDue();
    parts.push(Buffer.from(`${parts.length > 1 ? ',' : ''}${JSON.stringify(view(row))}`));
  }
  parts.push(Buffer.from(']'));
  await yieldIfDue();
  return Buffer.concat(parts);
}

export function createVersionLists(publicUrl: () => string) {
  const kept = new Map<string, { key: string; body: Uint8Array<ArrayBuffer> }>();
  /** Builds under way, by node: a request for the same key waits for it rather than build the list again. */
  const building = new Map<string, { key: string; body: Promise<Uint8Array<ArrayBuffer>> }>();
  let total = 0;
  const drop = (id: string) => {
    total -= kept.get(id)?.body.length ?? 0;
    kept.delete(id);
  };
  const keep = (id: string, key: string, body: Uint8Array<ArrayBuffer>) => {
    if (body.length > MAX_KEPT) return;
    drop(id); // another build of this node (at another key) may have kept its list meanwhile: counted once
    kept.set(id, { key, body });
    total += body.length;
    for (const old of kept.keys()) {
      if (total <= MAX_KEPT) break;
      drop(old);
    }
  };
  return {
    /** The body for this row of the node, as UTF-8: the kept one while it is current, else `build`'s, kept. */
    async body(node: NodeRow, build: () => Promise<Uint8Array<ArrayBuffer>>): Promise<Uint8Array<ArrayBuffer>> {
      const key = `${node.created_at}\n${node.versions_generation}\n${publicUrl()}`;
      const found = kept.get(node.id);
      drop(node.id); // kept again below as the most recently used
      if (found?.key === key) {
        kept.set(node.id, found);
        total += found.body.length;
        return found.body;
      }
      const under = building.get(node.id);
      if (under?.key === key) return under.body;
      const body = build();
      building.set(node.id, { key, body });
      try {
        keep(node.id, key, await body);
      } finally {
        if (building.get(node.id)?.body === body) building.delete(node.id);
      }
      return body;
    },
  };
}

export type VersionLists = ReturnType<typeof createVersionLists>;
