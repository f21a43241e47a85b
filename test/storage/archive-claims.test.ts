// Claims that expire sooner (issue [operate]): a live upload renews its claim on the version while it
// scans and puts, so a dead one's runs out in STALE_CLAIM_MS; and an admin releases a dead upload's
// claim at once with `nodereg admin release-claim NODE VERSION`, which also removes what it stored.
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STALE_CLAIM_MS } from '../../src/server/store/registry-store.js';
import { archiveKey } from '../../src/server/views.js';
import { runInProcess } from '../cli/in-process.js';
import { startServer, type TestServer } from '../helpers.js';
import { createPublisher, createUser, makeZip, publish, uploadTo } from '../server/fixtures.js';
import { MemoryBudget, UPLOAD_MEMORY_MAX } from '../../src/server/archives/validate-zip.js';

/** The receive buffers' budget, as a server's. */
const receiveMemory = new MemoryBudget(UPLOAD_MEMORY_MAX);

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** A version whose upload died after its put: the claim held, its bytes at the key, nothing recorded. */
async function deadUpload(nodeId: string) {
  const alice = await createUser(server);
  const publisherId = `pub-${randomBytes(4).toString('hex')}`;
  await createPublisher(server, alice, publisherId);
  const published = await publish(server, alice.token, publisherId, nodeId, '1.0.0');
  expect(published.status, published.text).toBe(201);
  const key = archiveKey(publisherId, nodeId, '1.0.0');
  const { store, archives } = server.server;
  expect(await store.claimArchive(published.body.node_version.id, key)).toBe(true);
  await archives.commit(await archives.receive(Readable.from([randomBytes(500)]), 10_000, receiveMemory), key);
  return {
    alice,
    publisherId,
    key,
    signedUrl: published.body.signedUrl as string,
    versionId: published.body.node_version.id as string,
  };
}

describe('claims on a version archive', () => {
  it('a dead upload holds the version (409 naming release-claim) until an admin releases it; then it uploads', async () => {
    const { alice, publisherId, key, signedUrl } = await deadUpload('claimed-node');
    const zip = await makeZip({ 'node.py': '# after the release\n' });
    const held = await uploadTo(signedUrl, zip);
    expect(held.status).toBe(409);
    expect(held.text).toContain('nodereg admin release-claim claimed-node 1.0.0');

    const cli = (token: string, args: string[]) => runInProcess(['--registry', server.url, '--token', token, ...args]);
    const notAdmin = await cli(alice.token, ['admin', 'release-claim', 'claimed-node', '1.0.0']);
    expect(notAdmin.code).toBe(4);
    expect(notAdmin.stderr).toContain('admin token');

    const released = await cli(server.adminToken, ['admin', 'release-claim', 'claimed-node', '1.0.0']);
    expect(released.code, released.stderr).toBe(0);
    expect(released.stdout + released.stderr).toContain('released the claim on claimed-node 1.0.0');
    expect(await server.server.archives.exists(key)).toBe(false);
    const again = await cli(server.adminToken, ['admin', 'release-claim', 'claimed-node', '1.0.0']);
    expect(again.code).toBe(5);

    expect((await uploadTo(signedUrl, zip)).status).toBe(200);
    const download = await fetch(`${server.url}/archives/${publisherId}/claimed-node/1.0.0/node.zip`);
    expect(Buffer.from(await download.arrayBuffer()).equals(zip)).toBe(true);
  });

  it('a renewed claim is not taken over; one left unrenewed past STALE_CLAIM_MS is', async () => {
    expect(STALE_CLAIM_MS).toBeLessThanOrEqual(2 * 60_000);
    const { key, versionId } = await deadUpload('renewed-node');
    const { store, db } = server.server;
    const age = (ms: number) =>
      db!
        .prepare('UPDATE archive_claims SET created_at = ? WHERE version_id = ?')
        .run(new Date(Date.now() - ms).toISOString(), versionId);
    age(STALE_CLAIM_MS + 1000);
    await store.renewArchiveClaim(versionId, key);
    expect(await store.claimArchive(versionId, key)).toBe(false);
    age(STALE_CLAIM_MS + 1000);
    expect(await store.claimArchive(versionId, key)).toBe(true);
  });
});
