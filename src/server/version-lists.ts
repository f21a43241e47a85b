// The serialised answer of `GET /nodes/{id}/versions` without findings (the same for every caller),
// kept per node while the node's versions generation is the one it was built at, as node-answers.ts
// keeps the node's: every write to a version moves it (migration 'version-order'), a download does
// not, so counting downloads does not drop the kept lists. A node with thousands of versions answers
// megabytes that took ~40 µs of CPU per version to build (3,000: 117 ms, measured), which one
// anonymous client could ask for again and again.
import type { NodeRow } from './store/registry-store.js';

/** The bytes of the bodies kept, all together, at most: the least recently used go first. */
const MAX_KEPT = 64 * 1024 * 1024;

export function createVersionLists(publicUrl: () => string) {
  const kept = new Map<string, { key: string; body: Uint8Array<ArrayBuffer> }>();
  const utf8 = new TextEncoder();
  let total = 0;
  const drop = (id: string) => {
    total -= kept.get(id)?.body.length ?? 0;
    kept.delete(id);
  };
  return {
    /** The body for this row of the node, as UTF-8: the kept one while it is current, else `build`'s, kept. */
    async body(node: NodeRow, build: () => Promise<unknown>): Promise<Uint8Array<ArrayBuffer>> {
      const key = `${node.created_at}\n${node.versions_generation}\n${publicUrl()}`;
      const found = kept.get(node.id);
      drop(node.id); // kept again below as the most recently used
      if (found?.key === key) {
        kept.set(node.id, found);
        total += found.body.length;
        return found.body;
      }
      const body = utf8.encode(JSON.stringify(await build()));
      if (body.length > MAX_KEPT) return body;
      drop(node.id); // another request may have kept its build of this node meanwhile: counted once
      kept.set(node.id, { key, body });
      total += body.length;
      for (const id of kept.keys()) {
        if (total <= MAX_KEPT) break;
        drop(id);
      }
      return body;
    },
  };
}

export type VersionLists = ReturnType<typeof createVersionLists>;
