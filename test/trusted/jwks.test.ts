// The issuer's keys: fetched once and kept, fetched again for a key id not seen yet, and bounded: an
// issuer whose JWKS never answers holds only the exchanges that need it (ending as a 503), while other
// requests, and exchanges for another issuer, are answered meanwhile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectError } from '../server/fixtures.js';
import { newKey, startIssuer, type StandInIssuer } from './oidc-issuer.js';
import { addTrust, exchange, type Trusted, trustedRegistry } from './trusted-fixtures.js';

let t: Trusted;
let slow: StandInIssuer;
let audience: string;
beforeAll(async () => {
  slow = await startIssuer();
  slow.hangJwks = true;
  t = await trustedRegistry({ oidcTimeout: 1000, oidcIssuers: { slow: slow.url } });
  audience = t.server.url;
  expect((await addTrust(t, { repository: 'octo-org/my-node', workflow: 'publish.yml' })).status).toBe(201);
});
afterAll(async () => {
  await t.close();
  await slow.close();
});

describe("the issuer's keys", () => {
  it('are fetched once and kept', async () => {
    expect((await exchange(t, await t.issuer.sign({ aud: audience }))).status).toBe(201);
    const fetches = t.issuer.jwksFetches;
    expect((await exchange(t, await t.issuer.sign({ aud: audience }))).status).toBe(201);
    expect(t.issuer.jwksFetches).toBe(fetches);
  });

  it('are fetched again for a key id not seen yet (rotation)', async () => {
    const fetches = t.issuer.jwksFetches;
    const rotated = await newKey('key-2');
    t.issuer.keys = [rotated, ...t.issuer.keys];
    const reply = await exchange(t, await t.issuer.sign({ aud: audience }, rotated));
    expect(reply.status, reply.text).toBe(201);
    expect(t.issuer.jwksFetches).toBe(fetches + 1);
  });

  it('a hanging JWKS does not stall other requests', async () => {
    const stalled = exchange(t, await slow.sign({ aud: audience }));
    // the slow issuer's JWKS has been asked for before the other requests go
    while (slow.jwksFetches === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await call(t.server.url, 'GET', '/healthz')).status).toBe(200);
    expect((await call(t.server.url, 'GET', '/nodes')).status).toBe(200);
    expect((await exchange(t, await t.issuer.sign({ aud: audience }))).status).toBe(201);
    const reply = await stalled;
    expectError(reply, 503, 'unavailable');
    expect(reply.body.message).toContain('issuer slow');
  });
});
