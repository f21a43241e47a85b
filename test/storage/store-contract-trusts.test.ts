// The RegistryStore contract for trusted publishing, on every store: trusts, exchanged tokens, and a
// version's provenance recorded with its archive.
import { afterAll, describe, expect, it } from 'vitest';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { EMPTY_PENDING_FIELDS } from '../helpers.js';
import { storeBackends } from './store-backends.js';

const backends = storeBackends();

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
});

const TRUST = {
  publisher_id: 'acme',
  node_id: null,
  issuer: 'github',
  repository: 'acme/node',
  workflow: 'publish.yml',
  environment: 'release',
  ref: null,
  created_by: 'u1',
};

describe.each(backends)('trusted publishing on $name', (backend) => {
  const fresh = async () => {
    const { store, close } = await backend.open();
    closers.push(close);
    await store.createUser({ id: 'u1', name: 'one' });
    await store.createPublisher('acme', {}, 'u1');
    await store.createPublisher('other', {}, 'u1');
    return store;
  };

  it('keeps trusts per publisher; removing one removes the tokens exchanged through it', async () => {
    const store = await fresh();
    const trust = await store.addTrust(TRUST);
    expect(trust).toMatchObject({ ...TRUST, id: expect.any(String), created_at: expect.any(String) });
    expect(await store.listTrusts('acme')).toEqual([trust]);
    expect(await store.listTrusts('other')).toEqual([]);
    const exchange = await store.createExchange({
      hash: 'h1',
      trust_id: trust.id,
      publisher_id: 'acme',
      node_id: null,
      user_id: 'u1',
      claims: '{"repository":"acme/node"}',
      expires_at: '2030-01-01T00:00:00.000Z',
    });
    expect(exchange.id).toMatch(/^oidc_/);
    expect(await store.useExchange('h1')).toEqual(exchange);
    expect(await store.getExchange(exchange.id)).toEqual(exchange);
    expect(await store.useExchange('unknown')).toBeUndefined();
    expect(await store.removeTrust('other', trust.id)).toBe(false);
    expect(await store.removeTrust('acme', trust.id)).toBe(true);
    expect(await store.listTrusts('acme')).toEqual([]);
    expect(await store.useExchange('h1')).toBeUndefined();
    expect(await store.getExchange(exchange.id)).toBeUndefined();
  });

  it("records a version's provenance with its archive", async () => {
    const store = await fresh();
    const outcome = await store.publish({
      publisherId: 'acme',
      nodeId: 'node',
      node: {},
      version: '1.0.0',
      pending: EMPTY_PENDING_FIELDS,
    });
    if (outcome.kind !== 'created') return expect.fail(outcome.kind);
    const id = outcome.version.id;
    expect(outcome.version.provenance).toBeNull();
    expect(await store.claimArchive(id, 'acme/node/1.0.0/node.zip')).toBe(true);
    const recorded = await store.recordArchive(id, {
      sha256: 'a'.repeat(64),
      size: 10,
      status: 'NodeVersionStatusActive',
      provenance: '{"payloadType":"x"}',
    });
    expect(recorded.provenance).toBe('{"payloadType":"x"}');
    expect((await store.getVersion('node', '1.0.0'))?.provenance).toBe('{"payloadType":"x"}');
  });
});
