// One misconfigured instance must not lock the fleet out (issue [operate]): an instance given another
// NODEREG_ADMIN_TOKEN than the one the shared database holds refuses to start, and the fleet's token
// keeps working; told to rotate (--rotate-admin-token), it replaces it.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { openDatabaseTarget } from '../../src/server/backends.js';
import { StartRefusedError } from '../../src/server/start-refusal.js';
import { startServer, tempDir } from '../helpers.js';
import { testPostgres } from '../postgres.js';
import { call } from '../server/fixtures.js';

const postgresServer = testPostgres();
const newToken = () => `nrg_u_admin${randomBytes(16).toString('hex')}`;

describe.skipIf(!postgresServer)('the admin token of a fleet on PostgreSQL', () => {
  it('an instance with another NODEREG_ADMIN_TOKEN is refused, unless told to rotate', async () => {
    const url = await (await postgresServer!).database();
    const archivesDir = tempDir('nodereg-fleet-archives-');
    const instance = async (adminToken: string, rotateAdminToken?: boolean) =>
      startServer({
        adminToken,
        rotateAdminToken,
        database: await openDatabaseTarget({ kind: 'postgres', url }),
        archives: createLocalArchiveStorage(archivesDir),
      });
    const isAdmin = async (base: string, token: string) =>
      (await call(base, 'GET', '/users/me', { token })).body?.user?.admin === true;
    const fleetToken = newToken();
    const a = await instance(fleetToken);
    const b = await instance(fleetToken); // the same token: a second instance starts
    try {
      const other = newToken();
      const refused = await instance(other).then(
        (started) => started.close().then(() => undefined),
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(StartRefusedError);
      expect((refused as StartRefusedError).code).toBe('admin_token_differs');
      expect((refused as StartRefusedError).fix).toContain('--rotate-admin-token');
      expect((refused as Error).message).not.toContain(other);
      expect([await isAdmin(a.url, fleetToken), await isAdmin(b.url, fleetToken)]).toEqual([true, true]);

      const rotated = await instance(other, true);
      expect(await isAdmin(rotated.url, other)).toBe(true);
      expect(await isAdmin(a.url, fleetToken)).toBe(false);
      await rotated.close();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
