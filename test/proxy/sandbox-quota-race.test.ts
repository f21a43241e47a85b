// The sandbox quota must hold when submissions race: many at once on one instance, and through two
// instances on one PostgreSQL database. A check that reads the stored bytes and writes afterwards lets
// every racing submission pass; the store decides and reserves in one step.
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { openDatabaseTarget } from '../../src/server/backends.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { testPostgres } from '../postgres.js';
import { call, createUser, type TestUser } from '../server/fixtures.js';

const KiB = 1024;
const RELIGHT = '/proxy/img/v1/ai/image-relight';
/** A PNG-looking image of `bytes` bytes, as base64. */
const image = (bytes: number) =>
  Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(bytes - 8, 7)]).toString('base64');
// 8 results of 64 KiB fit each user, 12 fit in all; 24 submissions of each user race.
const proxy = { sandboxDelay: 0, sandboxQuotaUser: 8 * 64 * KiB, sandboxQuotaTotal: 12 * 64 * KiB };
const RACING = 24;

const postgresServer = testPostgres();

interface Setup {
  name: string;
  /** The instances, sharing one database and one archive dir (`archives`), and the bytes of results that database keeps. */
  start(): Promise<{ instances: TestServer[]; archives: string; stored(): Promise<number>; close(): Promise<void> }>;
}

const setups: Setup[] = [
  {
    name: 'one instance on SQLite',
    async start() {
      const server = await startServer({ proxy });
      const sqlite = (await import('better-sqlite3')).default;
      const stored = async () => {
        const db = new sqlite(`${server.dataDir}/registry.db`, { readonly: true });
        const row = db
          .prepare('SELECT coalesce(sum(size), 0) AS bytes FROM proxy_results WHERE file IS NOT NULL')
          .get() as { bytes: number };
        db.close();
        return row.bytes;
      };
      return { instances: [server], archives: join(server.dataDir, 'archives'), stored, close: () => server.close() };
    },
  },
];
if (postgresServer) {
  setups.push({
    name: 'two instances on one PostgreSQL',
    async start() {
      const url = await (await postgresServer).database();
      const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
      const shared = tempDir('nodereg-archives-');
      const instances: TestServer[] = [];
      for (let i = 0; i < 2; i++) {
        const database = await openDatabaseTarget({ kind: 'postgres', url });
        instances.push(await startServer({ proxy, adminToken, database, archives: createLocalArchiveStorage(shared) }));
      }
      const stored = async () => {
        const sql = postgres(url, { max: 1, onnotice: () => {} });
        const [row] = await sql`SELECT coalesce(sum(size), 0) AS bytes FROM proxy_results WHERE file IS NOT NULL`;
        await sql.end();
        return Number(row.bytes);
      };
      return {
        instances,
        archives: shared,
        stored,
        close: async () => void (await Promise.all(instances.map((s) => s.close()))),
      };
    },
  });
}

describe.each(setups)('sandbox quota under racing submissions: $name', (setup) => {
  it('never keeps more than the quota, per user or in all; every submission is 200 or 429', async () => {
    const { instances, archives, stored, close } = await setup.start();
    try {
      const users: TestUser[] = [
        await createUser(instances[0], 'race-alice'),
        await createUser(instances[0], 'race-bob'),
      ];
      const body = { image: image(64 * KiB), prompt: 'soft light' };
      const replies = await Promise.all(
        Array.from({ length: RACING * users.length }, (_, i) =>
          call(instances[i % instances.length].url, 'POST', RELIGHT, { token: users[i % users.length].token, body }),
        ),
      );
      for (const reply of replies) expect([200, 429], reply.text).toContain(reply.status);
      const accepted = (user: TestUser) =>
        replies.filter((reply, i) => reply.status === 200 && users[i % users.length] === user).length;
      expect(accepted(users[0])).toBeLessThanOrEqual(8);
      expect(accepted(users[1])).toBeLessThanOrEqual(8);
      expect(accepted(users[0]) + accepted(users[1])).toBe(12); // the total fills, and no further
      expect(await stored()).toBeLessThanOrEqual(proxy.sandboxQuotaTotal);
      // a refused submission leaves no file behind
      expect(readdirSync(join(archives, '_proxy-results'))).toHaveLength(12);
    } finally {
      await close();
    }
  }, 20_000);
});
