// The server factory takes the database and the archive storage as options (the seams a network
// store and an object storage plug into); the embedded defaults are used only when none is given.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { createTaskStore } from '../../src/server/proxy/store.js';
import { openDatabase } from '../../src/server/store/db.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { createPublisher, createUser, publishAndUpload } from './fixtures.js';

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
      database: { store: createSqliteRegistryStore(db), tasks: createTaskStore(db), close: () => { closed++; db.close(); } },
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
    expect(readdirSync(server.dataDir).filter((name) => name.startsWith('registry.db') || name === 'archives')).toEqual([]);

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
