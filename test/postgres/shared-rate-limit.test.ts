// `--rate-limit` on two instances sharing one PostgreSQL database: the limit is the fleet's, so a caller
// who spreads its changes over both instances gets no more than the limit in all.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { openDatabaseTarget } from '../../src/server/backends.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { testPostgres } from '../postgres.js';
import { call, createPublisher, createUser, publish } from '../server/fixtures.js';

const postgresServer = testPostgres();
const LIMIT = 3;
const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe.skipIf(!postgresServer)('the rate limit on PostgreSQL', () => {
  it('holds across two instances: a caller alternating between them gets LIMIT changes a minute in all', async () => {
    const url = await (await postgresServer!).migratedDatabase();
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    const archives = tempDir('nodereg-archives-');
    const instances: TestServer[] = [];
    for (let i = 0; i < 2; i++) {
      const server = await startServer({
        adminToken,
        rateLimit: LIMIT,
        database: await openDatabaseTarget({ kind: 'postgres', url }),
        archives: createLocalArchiveStorage(archives),
      });
      closers.push(() => server.close());
      instances.push(server);
    }
    const [a, b] = instances;
    const owner = await createUser(a, 'owner');
    await createPublisher(b, owner, 'acme');
    expect((await publish(a, owner.token, 'acme', 'limited', '1.0.0')).status).toBe(201);
    const reviewer = await createUser(a, 'reviewer');
    // The limit counts whole minutes: start well inside one, so that all the reviews fall in it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_100 - intoMinute));
    const statuses: number[] = [];
    for (let i = 0; i < 2 * LIMIT + 2; i++) {
      const via = i % 2 ? b : a;
      const reply = await call(via.url, 'POST', `/nodes/limited/reviews?star=${(i % 5) + 1}`, {
        token: reviewer.token,
      });
      statuses.push(reply.status);
      if (reply.status === 429) expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(200), ...Array(LIMIT + 2).fill(429)]);
  });
});
