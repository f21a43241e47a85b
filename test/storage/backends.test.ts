// The server factory takes the database and the archive storage as options (the seams a network
// store and an object storage plug into); the embedded defaults are used only when none is given.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { rollBackArchiveClaims } from '../../src/server/archives/claims.js';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { createTaskStore } from '../../src/server/proxy/store.js';
import { openDatabase } from '../../src/server/store/db.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { startServer, tempDir, type TestServer, EMPTY_PENDING_FIELDS } from '../helpers.js';
import { createPublisher, createUser, publishAndUpload } from '../server/fixtures.js';
import { MemoryBudget, UPLOAD_MEMORY_MAX } from '../../src/server/archives/validate-zip.js';

/** The receive buffers' budget, as a server's. */
const receiveMemory = new MemoryBudget(UPLOAD_MEMORY_MAX);

const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
});

describe('a server given its database and archive storage', () => {
  it('keeps every row and archive there, none in its data dir, and closes the database it was given', async () => {
    const elsewhere = tempDir('nodereg-elsewhere-');
    const db = openDatabase(join(elsewhere, 'other.db'));
    let closed = 0;
    const server = await startServer({
      database: {
        store: createSqliteRegistryStore(db),
        tasks: createTaskStore(db),
        close: () => {
          closed++;
          db.close();
        },
      },
      archives: createLocalArchiveStorage(join(elsewhere, 'bucket')),
    });
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'alice-co');
    const version = await publishAndUpload(server, alice.token, 'alice-co', 'elsewhere-node', '1.0.0');

    const download = await fetch(version.downloadUrl);
    expect(download.status).toBe(200);
    expect(existsSync(join(elsewhere, 'bucket', 'alice-co', 'elsewhere-node', '1.0.0', 'node.zip'))).toBe(true);
    expect(db.prepare("SELECT count(*) AS n FROM versions WHERE node_id = 'elsewhere-node'").get()).toEqual({ n: 1 });
    expect(server.server.db).toBeUndefined();
    expect(readdirSync(server.dataDir).filter((name) => name.startsWith('registry.db') || name === 'archives')).toEqual(
      [],
    );

    await server.close();
    expect(closed).toBe(1);
  });

  it('uses SQLite and the archives dir of its data dir when given none', async () => {
    const server = await startServer();
    servers.push(server);
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'alice-co');
    await publishAndUpload(server, alice.token, 'alice-co', 'embedded-node', '1.0.0');
    expect(server.server.db).toBeDefined();
    expect(existsSync(join(server.dataDir, 'registry.db'))).toBe(true);
    expect(existsSync(join(server.dataDir, 'archives', 'alice-co', 'embedded-node', '1.0.0', 'node.zip'))).toBe(true);
  });
});

describe('rolling back archive claims at start', () => {
  it('on a shared database, leaves the claims of uploads other instances may be finishing, and rolls back stale ones', async () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, 'registry.db'));
    const store = createSqliteRegistryStore(db);
    const archives = createLocalArchiveStorage(join(dir, 'archives'));
    await store.createUser({ id: 'u', name: 'u' });
    await store.createPublisher('acme', {}, 'u');
    const outcome = await store.publish({
      publisherId: 'acme',
      nodeId: 'n',
      node: {},
      version: '1.0.0',
      pending: EMPTY_PENDING_FIELDS,
    });
    if (outcome.kind !== 'created') throw new Error(outcome.kind);
    const key = 'acme/n/1.0.0/node.zip';
    expect(await store.claimArchive(outcome.version.id, key)).toBe(true);
    await archives.commit(await archives.receive(Readable.from([Buffer.from('zip')]), 10, receiveMemory), key);

    expect(await rollBackArchiveClaims(store, archives, { shared: true })).toBe(0);
    expect(await archives.exists(key)).toBe(true);
    db.prepare("UPDATE archive_claims SET created_at = '2000-01-01T00:00:00.000Z'").run();
    expect(await rollBackArchiveClaims(store, archives, { shared: true })).toBe(1);
    expect(await archives.exists(key)).toBe(false);
    expect(await store.listArchiveClaims()).toEqual([]);
    db.close();
  });
});
