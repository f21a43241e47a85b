// The kept answers of GET /nodes/{id}/versions (src/server/version-lists.ts): what they hold is
// counted once, also when builds of the same node's list overwrite each other (PostgreSQL reads are
// truly concurrent); a count that drifted up would leave the store keeping nothing. Requests that
// ask for a list while it is built share that build.
import { describe, expect, it } from 'vitest';
import type { NodeRow } from '../../../src/server/store/registry-store.js';
import { createVersionLists } from '../../../src/server/version-lists.js';

const node = (id: string, versionsGeneration: number) =>
  ({ id, created_at: '2026-01-01T00:00:00.000Z', versions_generation: versionsGeneration }) as NodeRow;

describe('createVersionLists', () => {
  it('keeps a list after builds of the same node overwrote each other, and shares a build under way', async () => {
    const lists = createVersionLists(() => 'http://127.0.0.1:1');
    const big = Buffer.alloc(16 * 1024 * 1024); // 16 MiB: five of them are over the 64 MiB kept in all
    let builds = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = async () => {
      builds++;
      await gate;
      return big;
    };
    // five generations of the node built at once, each asked for twice in a row: one build per generation
    const racing = Array.from({ length: 10 }, (_, i) => lists.body(node('raced', Math.floor(i / 2)), slow));
    release();
    await Promise.all(racing);
    expect(builds).toBe(5);
    // one list of 16 MiB is kept now: asking again builds nothing, for this node or another
    await lists.body(node('raced', 4), slow);
    expect(builds).toBe(5);
    await lists.body(node('other', 1), slow);
    await lists.body(node('other', 1), slow);
    expect(builds).toBe(6);
  });
});
