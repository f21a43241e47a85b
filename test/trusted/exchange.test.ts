// POST /oidc/exchange against a stand-in issuer: a token that matches a trust becomes a 15-minute
// publish token; every refusal is a 4xx naming the claim, and nothing is created.
import { createPublicKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, makeZip, publish, uploadTo } from '../server/fixtures.js';
import { newKey } from './oidc-issuer.js';
import { addTrust, exchange, expectClaimRefused, rows, type Trusted, trustedRegistry } from './trusted-fixtures.js';

let t: Trusted;
let audience: string;
beforeAll(async () => {
  t = await trustedRegistry();
  audience = t.server.url;
  const trust = await addTrust(t, {
    repository: 'octo-org/my-node',
    workflow: 'publish.yml',
    environment: 'release',
    ref: 'refs/tags/v*',
  });
  expect(trust.status, trust.text).toBe(201);
});
afterAll(() => t.close());
afterEach(() => vi.useRealTimers());

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('a token that matches the trust', () => {
  it('is exchanged for a publish token that publishes and uploads', async () => {
    const reply = await exchange(t, await t.issuer.sign({ aud: audience }));
    expect(reply.status, reply.text).toBe(201);
    expect(reply.body.token).toMatch(/^nrg_oidc_/);
    expect(Date.parse(reply.body.expires_at) - Date.now()).toBeLessThanOrEqual(15 * 60 * 1000);
    const published = await publish(t.server, reply.body.token, t.publisherId, 'my-node', '1.0.0');
    expect(published.status, published.text).toBe(201);
    const uploaded = await uploadTo(published.body.signedUrl, await makeZip());
    expect(uploaded.status, uploaded.text).toBe(200);
    expect(uploaded.body.has_provenance).toBe(true);
  });

  it('names the trust in the publisher trust list', async () => {
    const list = await call(t.server.url, 'GET', `/publishers/${t.publisherId}/trusts`, { token: t.owner.token });
    expect(list.status, list.text).toBe(200);
    expect(list.body).toEqual([
      expect.objectContaining({ repository: 'octo-org/my-node', workflow: 'publish.yml', environment: 'release' }),
    ]);
  });
});

describe('refusals name the claim and create nothing', () => {
  const refusedWith = async (token: string, claim: string) => {
    const before = rows(t, 'oidc_exchanges');
    const reply = await exchange(t, token);
    expectClaimRefused(reply, claim);
    expect(rows(t, 'oidc_exchanges')).toBe(before);
    return reply;
  };

  it('another repository, with a hint that registers it', async () => {
    const reply = await refusedWith(await t.issuer.sign({ aud: audience, repository: 'evil/fork' }), 'repository');
    expect(reply.status).toBe(403);
    expect(reply.body.hint).toContain(
      'nodereg publisher trust add octo --repository evil/fork --workflow publish.yml --environment release',
    );
  });
  it('another workflow', async () => {
    const workflowRef = 'octo-org/my-node/.github/workflows/deploy.yml@refs/tags/v1.0.0';
    await refusedWith(await t.issuer.sign({ aud: audience, workflow_ref: workflowRef }), 'workflow_ref');
  });
  it('another environment, or none', async () => {
    await refusedWith(await t.issuer.sign({ aud: audience, environment: 'staging' }), 'environment');
    await refusedWith(await t.issuer.sign({ aud: audience, environment: undefined }), 'environment');
  });
  it('a ref the pattern does not match', async () => {
    await refusedWith(await t.issuer.sign({ aud: audience, ref: 'refs/heads/main' }), 'ref');
  });
  it('another audience', async () => {
    const reply = await refusedWith(await t.issuer.sign({ aud: 'https://other.example' }), 'aud');
    expect(reply.status).toBe(401);
  });
  it('an expired token', async () => {
    const past = Math.floor(Date.now() / 1000) - 600;
    await refusedWith(await t.issuer.sign({ aud: audience, iat: past - 300, exp: past }), 'exp');
  });
  it('a token not valid yet', async () => {
    await refusedWith(await t.issuer.sign({ aud: audience, nbf: Math.floor(Date.now() / 1000) + 600 }), 'nbf');
  });
  it('a signature by a key the issuer does not list', async () => {
    await refusedWith(await t.issuer.sign({ aud: audience }, await newKey('stranger')), 'kid');
  });
  it('alg none', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { ...t.issuer.job, iss: t.issuer.url, aud: audience, iat: now, exp: now + 300 };
    await refusedWith(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`, 'alg');
  });
  it("HS256 signed with the issuer's public key", async () => {
    const pem = createPublicKey({ key: t.issuer.keys[0].publicJwk, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const token = await new SignJWT({ ...t.issuer.job, iss: t.issuer.url, aud: audience })
      .setProtectedHeader({ alg: 'HS256', kid: t.issuer.keys[0].kid })
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(Buffer.from(pem));
    await refusedWith(token, 'alg');
  });
  it('an issuer the registry is not configured with', async () => {
    await refusedWith(await t.issuer.sign({ aud: audience, iss: 'https://ci.example.org' }), 'iss');
  });
  it('a token replayed after its expiry', async () => {
    const token = await t.issuer.sign({ aud: audience });
    expect((await exchange(t, token)).status).toBe(201);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10 * 60 * 1000 });
    await refusedWith(token, 'exp');
  });
});

describe('an exchanged token', () => {
  const exchanged = async () => {
    const reply = await exchange(t, await t.issuer.sign({ aud: audience }));
    expect(reply.status, reply.text).toBe(201);
    return reply.body.token as string;
  };

  it('is refused, saying why, for anything but publishing', async () => {
    const token = await exchanged();
    for (const [method, path, body] of [
      ['GET', '/users/me', undefined],
      ['POST', `/publishers/${t.publisherId}/tokens`, { name: 'stolen' }],
      ['PUT', `/publishers/${t.publisherId}/nodes/my-node`, { description: 'changed' }],
      ['POST', `/publishers/${t.publisherId}/trusts`, { repository: 'evil/fork', workflow: 'x.yml' }],
    ] as const) {
      const reply = await call(t.server.url, method, path, { token, body });
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(403);
      expect(reply.body.message).toContain('publishes and uploads only');
    }
    const trusts = await call(t.server.url, 'GET', `/publishers/${t.publisherId}/trusts`, { token: t.owner.token });
    expect(trusts.body).toHaveLength(1);
  });

  it('publishes for its publisher only, and creates nothing elsewhere', async () => {
    const other = await call(t.server.url, 'POST', '/publishers', { token: t.owner.token, body: { id: 'other' } });
    expect(other.status, other.text).toBe(201);
    const nodes = rows(t, 'nodes');
    const reply = await publish(t.server, await exchanged(), 'other', 'elsewhere', '1.0.0');
    expect(reply.status, reply.text).toBe(403);
    expect(reply.body.message).toContain('publishes for publisher octo only');
    expect(rows(t, 'nodes')).toBe(nodes);
  });

  it('stops working 15 minutes after the exchange', async () => {
    const token = await exchanged();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 16 * 60 * 1000 });
    const reply = await publish(t.server, token, t.publisherId, 'my-node', '9.0.0');
    expect(reply.status, reply.text).toBe(401);
  });
});
