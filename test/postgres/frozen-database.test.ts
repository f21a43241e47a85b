// A registry on PostgreSQL whose server freezes (SIGSTOP: connections stay open, nothing answers) while it
// serves: every request is a 503 within the database deadline, never held, and the server answers again
// once PostgreSQL is thawed, without a restart. The file has a PostgreSQL server of its own, since freezing
// the run's shared one would stall every other file's databases.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { STALE_MS } from '../../src/server/store/postgres/changes.js';
import { tempDir, type TestServer } from '../helpers.js';
import { testPostgres } from '../postgres.js';
import { call } from '../server/fixtures.js';
import { useServe } from '../server/serve-helper.js';
import { expectUnavailable, registryWithNode } from './outage-fixtures.js';

const serve = useServe();

const postgresServer = testPostgres({ own: true }); // its own: the test freezes it

describe.skipIf(!postgresServer)('nodereg serve when PostgreSQL freezes', () => {
  it('PostgreSQL frozen (SIGSTOP) while serving: requests are 503 within the deadline, /healthz answers, /readyz says not ready, and SIGCONT brings it back without a restart', async () => {
    const postgresHandle = await postgresServer!;
    const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
    const env = { NODEREG_ADMIN_TOKEN: adminToken, NODEREG_DATABASE_URL: await postgresHandle.migratedDatabase() };
    const served = await serve(['--port', '0', '--data-dir', tempDir()], { env });
    const { reader } = await registryWithNode({ url: served.url, adminToken } as TestServer);
    // A reply within `ms`, or a failure that says which request hung.
    const within = <T>(ms: number, what: string, reply: Promise<T>) =>
      Promise.race([
        reply,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref(),
        ),
      ]);
    // More requests than the pool has connections (10), reads (the kept one too) and writes.
    const wave = () =>
      Promise.all(
        [
          ...Array.from({ length: 8 }, (_, i) => ['GET', `/nodes?limit=${i + 1}`] as const),
          ...Array.from({ length: 4 }, () => ['GET', '/nodes/kept-node'] as const),
          ...Array.from({ length: 4 }, () => ['POST', '/nodes/kept-node/reviews?star=4'] as const),
          ['GET', '/readyz'] as const,
        ].map(([method, path]) =>
          within(
            15_000,
            `${method} ${path}`,
            call(served.url, method, path, method === 'POST' ? { token: reader.token } : {}),
          ),
        ),
      );

    // Frozen, then thawed, twice.
    for (let round = 0; round < 2; round++) {
      postgresHandle.signal('SIGSTOP');
      try {
        // A node's kept answer is trusted while the instance heard its beat within STALE_MS
        // (store/postgres/changes.ts): past that, every read asks the frozen database.
        await new Promise((resolve) => setTimeout(resolve, STALE_MS + 100));
        const started = Date.now();
        // Alive, also to a probe that sends a token (it is not looked up).
        const healthz = [
          call(served.url, 'GET', '/healthz'),
          call(served.url, 'GET', '/healthz', { token: reader.token }),
        ].map((reply) => within(3_000, 'GET /healthz', reply));
        const replies = await wave();
        for (const reply of await Promise.all(healthz)) expect(reply.status).toBe(200);
        for (const reply of replies) expectUnavailable(reply);
        // The deadline is 5 s (one store call); the margin is for a loaded machine.
        expect(Date.now() - started).toBeLessThan(12_000);
      } finally {
        postgresHandle.signal('SIGCONT');
      }
      // Back at once without a restart: the pool neither holds the frozen connections nor waits long
      // to reconnect the ones it closed (two waves of more requests than connections).
      for (const reply of (await Promise.all([wave(), wave()])).flat()) expect(reply.status, reply.text).toBe(200);
    }
    expect(served.stderr()).toContain('PostgreSQL did not answer within 5 s');
    expect(served.stderr()).not.toMatch(/internal error/);
    expect(await served.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 90_000);
});
