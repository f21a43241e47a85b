// The kept answers of GET /nodes/{id}/versions (src/server/version-lists.ts): what they hold is
// counted once, also when several requests build the same node's list at the same time (PostgreSQL
// reads are truly concurrent); a count that drifted up would leave the store keeping nothing.
import { describe, expect, it } from 'vitest';
import type { NodeRow } from '../../src/server/store/registry-store.js';
import { createVersionLists } from '../../src/server/version-lists.js';

const node = (id: string) => ({ id, created_at: '2026-01-01T00:00:00.000Z', generation: 1 }) as NodeRow;

describe('createVersionLists', () => {
  it('keeps a list after concurrent builds of the same node overwrote each other', async () => {
    const lists = createVersionLists(() => 'http://127.0.0.1:1');
    const big = 'x'.repeat(16 * 1024 * 1024); // 16 MiB: five of them are over the 64 MiB kept in all
    let builds = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = async () => {
      builds++;
      await gate;
      return big;
    };
    const racing = Array.from({ length: 5 }, () => lists.body(node('raced'), slow));
    release();
    await Promise.all(racing);
    expect(builds).toBe(5);
    // one list of 16 MiB is kept now: asking again builds nothing, for this node or another
    await lists.body(node('raced'), slow);
    expect(builds).toBe(5);
    await lists.body(node('other'), slow);
    await lists.body(node('other'), slow);
    expect(builds).toBe(6);
  });
});
