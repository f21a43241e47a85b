// `serve --pg-pool N` (NODEREG_PG_POOL): an instance opens at most N connections to PostgreSQL, however
// many requests wait; a value that is not a count is refused naming the flag or variable it came from.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { tempDir } from '../helpers.js';
import { testPostgres } from '../postgres.js';
import { useServe } from '../server/serve-helper.js';
import { countingProxy } from './counting-proxy.js';

const serve = useServe();

const postgresServer = testPostgres();

describe('serve --pg-pool', () => {
  it('refuses NODEREG_PG_POOL that is not a count from 1, naming the variable, before starting', async () => {
    const result = await runInProcess(['serve', '--port', '0', '--data-dir', tempDir()], {
      env: { NODEREG_PG_POOL: '-3' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('NODEREG_PG_POOL must be a number of connections from 1 to 1000 (got "-3")');
    expect(result.stdout).toBe('');
  });

  it.skipIf(!postgresServer)('opens at most NODEREG_PG_POOL connections while 40 requests wait', async () => {
    const proxy = await countingProxy(await (await postgresServer!).database());
    try {
      const served = await serve(
        ['--port', '0', '--database', proxy.url, '--storage', tempDir(), '--data-dir', tempDir(), '--log', 'off'],
        { env: { NODEREG_PG_POOL: '2', NODEREG_ADMIN_TOKEN: `nrg_u_admin${randomBytes(16).toString('hex')}` } },
      );
      try {
        const replies = await Promise.all(
          Array.from({ length: 40 }, (_, i) => fetch(`${served.url}/nodes/missing-${i}`).then((r) => r.status)),
        );
        expect(replies.every((status) => status === 404)).toBe(true);
        expect(proxy.connections()).toBeGreaterThanOrEqual(1);
        expect(proxy.connections()).toBeLessThanOrEqual(2);
      } finally {
        await served.stop();
      }
    } finally {
      await proxy.close();
    }
  });
});
