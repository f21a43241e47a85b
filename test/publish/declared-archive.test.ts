// Publishing declares the archive (DESIGN.md §6): a declared size over the registry's limit is refused
// before anything exists; a URL signed for a declared archive takes that archive only; the limits
// are readable at GET /limits.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import {
  call,
  createPublisher,
  createUser,
  expectError,
  makeZip,
  publish,
  uploadTo,
  type TestUser,
} from '../server/fixtures.js';

let server: TestServer;
let alice: TestUser;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

beforeAll(async () => {
  server = await startServer({ maxArchive: 64 * 1024, maxUnpacked: 256 * 1024 });
  alice = await createUser(server, 'alice');
  await createPublisher(server, alice, 'alice-co');
});
afterAll(() => server.close());

describe('publishing declares the archive', () => {
  it('GET /limits answers the archive limits, no token needed', async () => {
    const limits = await call(server.url, 'GET', '/limits');
    expect(limits.status).toBe(200);
    expect(limits.body).toEqual({ max_archive: 64 * 1024, max_unpacked: 256 * 1024, max_entries: 100_000 });
  });

  it('a declared size over the limit is 413 before anything is created, with a hint that nothing was', async () => {
    const refused = await publish(server, alice.token, 'alice-co', 'too-big', '1.0.0', {
      node_version: { archive_size: 64 * 1024 + 1, archive_sha256: 'a'.repeat(64) },
    });
    expectError(refused, 413, 'payload_too_large');
    expect(refused.body.message).toBe(
      "the archive is 64 KiB (65537 bytes), over this registry's limit of 64 KiB (65536 bytes)",
    );
    expect(refused.body.hint).toMatch(/^nothing was created\. Make the archive smaller/);
    expect((await call(server.url, 'GET', '/nodes/too-big')).status).toBe(404);
  });

  it('a malformed declaration is 400 naming the field', async () => {
    const bad = await publish(server, alice.token, 'alice-co', 'bad-decl', '1.0.0', {
      node_version: { archive_size: -1, archive_sha256: 'xyz' },
    });
    expectError(bad, 400, 'invalid_request');
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'node_version.archive_sha256',
      'node_version.archive_size',
    ]);
  });

  it('the signed URL takes the declared archive only: another size or SHA-256 is 400, the declared one 200', async () => {
    const zip = await makeZip({ 'a/__init__.py': 'x = 1\n' });
    const other = await makeZip({ 'a/__init__.py': `x = "${randomBytes(8).toString('hex')}"\n` });
    const published = await publish(server, alice.token, 'alice-co', 'declared', '1.0.0', {
      node_version: { archive_size: zip.length, archive_sha256: sha256(zip).toUpperCase() },
    });
    expect(published.status).toBe(201);
    const url = new URL(published.body.signedUrl);
    expect(url.searchParams.get('size')).toBe(String(zip.length));
    expect(url.searchParams.get('sha256')).toBe(sha256(zip));
    const wrong = await uploadTo(published.body.signedUrl, other);
    expectError(wrong, 400, 'invalid_request');
    expect(wrong.body.message).toMatch(
      /differs from the archive declared when the version was published; publish the version again/,
    );
    // the same archive under a forged declaration: the signature no longer holds
    url.searchParams.set('sha256', sha256(other));
    url.searchParams.set('size', String(other.length));
    expectError(await uploadTo(url.toString(), other), 403, 'forbidden');
    const right = await uploadTo(published.body.signedUrl, zip);
    expect(right.status, right.text).toBe(200);
    expect(right.body).toMatchObject({
      archive_sha256: sha256(zip),
      archive_size: zip.length,
      status: 'NodeVersionStatusActive',
    });
  });

  it('a retry before the archive arrives may declare another archive: the fresh URL takes that one', async () => {
    const first = await makeZip({ 'b/__init__.py': 'first\n' });
    const second = await makeZip({ 'b/__init__.py': 'second\n' });
    const declare = (zip: Buffer) => ({ node_version: { archive_size: zip.length, archive_sha256: sha256(zip) } });
    expect((await publish(server, alice.token, 'alice-co', 'redeclared', '1.0.0', declare(first))).status).toBe(201);
    const again = await publish(server, alice.token, 'alice-co', 'redeclared', '1.0.0', declare(second));
    expect(again.status).toBe(201);
    expect((await uploadTo(again.body.signedUrl, second)).status).toBe(200);
  });
});
