// What a request sees on SQLite of the reads taken once per event-loop turn (the tokens generation, a
// node's state): a write through the server's own connection at once, a write by another process on
// the same file (another `serve`, `nodereg restore`, a second connection here) from the next turn on.
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthenticate } from '../../src/server/accounts/admin.js';
import { hashToken } from '../../src/server/accounts/tokens.js';
import { openDatabase } from '../../src/server/store/db.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { turnReads } from '../../src/server/store/sqlite/turn-reads.js';
import { tempDir, EMPTY_PENDING_FIELDS } from '../helpers.js';

const TOKEN = 'nrg_u_turnreads';

const closers: (() => unknown)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A store on a file with user u1 and its token, a node `n` of publisher acme, and a second connection on the file. */
async function twoConnections() {
  const file = join(tempDir('nodereg-turn-reads-'), 'registry.db');
  const db = openDatabase(file);
  const other = openDatabase(file);
  closers.push(
    () => db.close(),
    () => other.close(),
  );
  const store = createSqliteRegistryStore(db);
  await store.createUser({ id: 'u1', name: 'one' });
  await store.createPublisher('acme', {}, 'u1');
  await store.publish({ publisherId: 'acme', nodeId: 'n', node: {}, version: '1.0.0', pending: EMPTY_PENDING_FIELDS });
  const token = await store.createToken({ kind: 'user', userId: 'u1', name: 't', hash: hashToken(TOKEN), prefix: 'x' });
  return { store, other, token, authenticate: createAuthenticate(store) };
}

/** A flag that turns true when the current event-loop turn ends. */
function turnEnds() {
  const turn = { ended: false };
  setImmediate(() => (turn.ended = true));
  return turn;
}

describe('reads taken once per event-loop turn on SQLite', () => {
  it("sees another process's revocation and node change from the next turn on, not within the turn", async () => {
    const { store, other, token, authenticate } = await twoConnections();
    await nextTurn();
    const turn = turnEnds();
    expect(await authenticate(TOKEN)).toMatchObject({ userId: 'u1' });
    const generation = await store.tokenGeneration();
    expect((await store.getNodeState('n'))?.status).toBe('NodeStatusActive');
    other.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), token.id);
    other.prepare("UPDATE nodes SET status = 'NodeStatusBanned' WHERE id = 'n'").run();
    // the rest of this turn reads what its first read saw
    expect(await store.tokenGeneration()).toBe(generation);
    expect(await authenticate(TOKEN)).toMatchObject({ userId: 'u1' });
    expect((await store.getNodeState('n'))?.status).toBe('NodeStatusActive');
    expect(turn.ended).toBe(false);
    await nextTurn();
    expect(await store.tokenGeneration()).toBeGreaterThan(generation);
    expect(await authenticate(TOKEN)).toBeNull();
    expect((await store.getNodeState('n'))?.status).toBe('NodeStatusBanned');
  });

  it('sees a write through its own connection at once, in the same turn', async () => {
    const { store, token, authenticate } = await twoConnections();
    await nextTurn();
    const turn = turnEnds();
    expect(await authenticate(TOKEN)).toMatchObject({ userId: 'u1' });
    expect((await store.getNodeState('n'))?.status).toBe('NodeStatusActive');
    await store.revokeToken(token.id);
    await store.updateNode('n', { status: 'NodeStatusBanned' });
    expect(await authenticate(TOKEN)).toBeNull();
    expect((await store.getNodeState('n'))?.status).toBe('NodeStatusBanned');
    expect(turn.ended).toBe(false);
  });
});

describe('turnReads on one connection', () => {
  it('keeps no value read inside a transaction that then rolls back', async () => {
    const db = openDatabase(join(tempDir('nodereg-turn-reads-'), 'registry.db'));
    closers.push(() => db.close());
    const readOncePerTurn = turnReads(db);
    const generation = () =>
      readOncePerTurn('tokens generation', () =>
        db.prepare("SELECT value FROM generations WHERE name = 'tokens'").pluck().get(),
      );
    await nextTurn();
    const before = generation();
    expect(() =>
      db.transaction(() => {
        db.prepare("UPDATE generations SET value = value + 1 WHERE name = 'tokens'").run();
        expect(generation()).not.toBe(before); // the transaction sees its own write
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    // the same turn: the write never happened
    expect(generation()).toBe(before);
  });
});
