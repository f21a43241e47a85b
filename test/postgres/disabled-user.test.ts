// Two instances on one PostgreSQL database: a user disabled (or deleted) through one has their tokens
// refused by the other as soon as it hears the change's notice, although it had just accepted them and
// kept the principal (the notice arrives on its own connection, so a request sent the moment the write
// answered may still come first); enabled again, they work there at once (a disabled user's principal is
// never kept).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { openDatabaseTarget } from '../../src/server/backends.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { heard, testPostgres } from '../postgres.js';
import { call, createPat, createPublisher, createUser, expectError } from '../server/fixtures.js';

const postgresServer = testPostgres();

async function twoInstances(): Promise<TestServer[]> {
  const url = await (await postgresServer!).migratedDatabase();
  const adminToken = `nrg_u_admin${randomBytes(16).toString('hex')}`;
  const archives = tempDir('nodereg-archives-');
  const instances: TestServer[] = [];
  for (let i = 0; i < 2; i++)
    instances.push(
      await startServer({
        adminToken,
        database: await openDatabaseTarget({ kind: 'postgres', url }),
        archives: createLocalArchiveStorage(archives),
      }),
    );
  return instances;
}

describe.skipIf(!postgresServer)('a disabled user on two instances of one PostgreSQL database', () => {
  it('is refused on B at once after A disables them, and let in again at once after A enables them', async () => {
    const [a, b] = await twoInstances();
    try {
      const user = await createUser(a, 'mallory');
      await createPublisher(a, user, 'mallory-pub');
      const pat = await createPat(a, user, 'mallory-pub');
      for (const token of [user.token, pat])
        expect((await call(b.url, 'GET', '/users/me', { token })).status).toBe(200);
      const disabled = await call(a.url, 'POST', `/users/${user.id}/disable`, { token: a.adminToken });
      expect(disabled.status, disabled.text).toBe(200);
      for (const token of [user.token, pat])
        await heard(async () => {
          const refused = await call(b.url, 'GET', '/users/me', { token });
          expectError(refused, 403, 'forbidden');
          expect(refused.body.message).toContain('is disabled');
        });
      expect((await call(a.url, 'POST', `/users/${user.id}/enable`, { token: a.adminToken })).status).toBe(200);
      expect((await call(b.url, 'GET', '/users/me', { token: user.token })).status).toBe(200);
      // deleted through B: A refuses the token it had just accepted
      expect((await call(a.url, 'GET', '/users/me', { token: user.token })).status).toBe(200);
      const deleted = await call(b.url, 'DELETE', `/users/${user.id}?remove_memberships=true`, { token: b.adminToken });
      expectError(deleted, 409, 'conflict'); // the sole owner of mallory-pub
      const other = await createUser(b, 'trent');
      const moved = await call(b.url, 'DELETE', `/users/${user.id}?transfer_to=${other.id}`, { token: b.adminToken });
      expect(moved.status, moved.text).toBe(204);
      await heard(async () =>
        expectError(await call(a.url, 'GET', '/users/me', { token: user.token }), 401, 'unauthorized'),
      );
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
