// The AI proxy sandbox keeps result files for 24 h: without a quota three requests kept 54 MB
// (issue 11). Now the bytes kept are bounded per user (all its tokens together) and in all; past
// either, a submission is 429 with Retry-After, and the quota frees as results expire.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_QUOTA } from '../../src/shared/tuning.js';
import { resolveProxyOptions } from '../../src/server/proxy/options.js';
import { startServer, type TestServer } from '../helpers.js';
import { client, createUser, expectError, type TestUser } from '../server/fixtures.js';

const MiB = 1024 * 1024;
const RELIGHT = '/proxy/img/v1/ai/image-relight';
const VIDEO = '/proxy/vid/extend';
/** A PNG-looking image of `bytes` bytes, as base64. */
const image = (bytes: number) =>
  Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(bytes - 8, 7)]).toString('base64');

let server: TestServer;
let api: ReturnType<typeof client>;
let alice: TestUser;
let bob: TestUser;

// scaled down: 3 MiB per user, 5 MiB in all; results kept long enough that none expires during a test
// that counts them, however slow the machine
const QUOTA = { sandboxDelay: 0, sandboxQuotaUser: 3 * MiB, sandboxQuotaTotal: 5 * MiB };

beforeAll(async () => {
  server = await startServer({ proxy: { ...QUOTA, resultTtl: 600_000 } });
  api = client(server);
  alice = await createUser(server, 'quota-alice');
  bob = await createUser(server, 'quota-bob');
});
afterAll(() => server.close());

const relightOn = (on: ReturnType<typeof client>, token: string, bytes = MiB) =>
  on.post(RELIGHT, { token, body: { image: image(bytes), prompt: 'soft light' } });
const relight = (token: string, bytes = MiB) => relightOn(api, token, bytes);
// result files live in the archive storage (DIR/archives here), under _proxy-results/
const resultBytes = () => readdirSync(join(server.dataDir, 'archives', '_proxy-results')).length;
describe('sandbox quota', () => {
  it('defaults to 32 MiB per user and 512 MiB in all', () => {
    const options = resolveProxyOptions();
    expect([options.sandboxQuotaUser, options.sandboxQuotaTotal]).toEqual([
      DEFAULT_SANDBOX_QUOTA.user,
      DEFAULT_SANDBOX_QUOTA.total,
    ]);
    expect(DEFAULT_SANDBOX_QUOTA.user).toBeLessThan(54e6); // the reproduction kept 54 MB for one user
  });

  it('refuses a user past their quota, whichever of their tokens they use, and the registry past its total', async () => {
    for (let i = 0; i < 3; i++) expect((await relight(alice.token)).status).toBe(200);
    const over = await relight(alice.token);
    expectError(over, 429, 'rate_limited');
    expect(over.body.message).toContain(String(3 * MiB));
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const second = (await api.post('/users/me/tokens', { token: alice.token, body: { name: 'another' } })).body.token;
    expectError(await relight(second), 429, 'rate_limited');
    // a video whose base64 video_url would be stored counts the same
    expectError(
      await api.post(VIDEO, {
        token: second,
        body: { model: 'vidq2-pro', image: image(100), video_url: image(MiB), video_creation_id: 'c' },
      }),
      429,
      'rate_limited',
    );
    expect(resultBytes()).toBe(3);

    // bob has his own allowance, until the registry's total (5 MiB) is reached
    for (let i = 0; i < 2; i++) expect((await relight(bob.token)).status).toBe(200);
    const full = await relight(bob.token);
    expectError(full, 429, 'rate_limited');
    expect(full.body.message).toContain("this registry's");
    expect(resultBytes()).toBe(5);
  });

  it('frees as results expire', async () => {
    // results kept 2 s: a user who filled the quota is refused until they have expired, then may submit again
    const resultTtl = 2_000;
    const short = await startServer({ proxy: { ...QUOTA, resultTtl } });
    try {
      const on = client(short);
      const carol = await createUser(short, 'quota-carol');
      const filling = Date.now();
      for (let i = 0; i < 3; i++) expect((await relightOn(on, carol.token)).status).toBe(200);
      const refused = await relightOn(on, carol.token);
      // none of her results can have expired yet when less than their time has passed since the first
      if (Date.now() - filling < resultTtl) expectError(refused, 429, 'rate_limited');
      let status = 0;
      for (const deadline = Date.now() + 15_000; status !== 200 && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        status = (await relightOn(on, carol.token)).status;
      }
      expect(status).toBe(200);
    } finally {
      await short.close();
    }
  });
});
