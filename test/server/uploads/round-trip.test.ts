// Upload and download of archives: the publish → upload → Active → download round trip, every refusal
// of the upload route, review modes, latest_version through the API, install counting downloads.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NodeVersion } from '../../../src/contract/resources.js';
import { signUploadUrl } from '../../../src/server/archives/signing.js';
import { startServer as startOne, type TestServer } from '../../helpers.js';
import {
  call,
  client,
  createPat,
  createPublisher,
  createUser,
  expectError,
  makeZip,
  publish,
  publishAndUpload,
  uploadTo,
  type TestUser,
} from '../fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let alice: TestUser;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// Every way through the upload route (stored, refused, a lost race) gives back the memory it held for the
// check and the scan, on every server of the file.
const started: TestServer[] = [];
const startServer = async (options: Parameters<typeof startOne>[0] = {}) => {
  const one = await startOne(options);
  started.push(one);
  return one;
};
afterEach(() => {
  for (const one of started) expect(one.server.uploadMemory.held).toBe(0);
});

beforeAll(async () => {
  server = await startServer({ maxArchive: 64 * 1024, maxUnpacked: 256 * 1024 });
  api = client(server);
  alice = await createUser(server, 'alice');
  await createPublisher(server, alice, 'alice-co');
});
afterAll(() => server.close());

/** Sends only the request head (and maybe a little body) and returns the first answer the server gives. */
function headOnly(url: string, head: Record<string, string>, body = ''): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), '127.0.0.1', () => {
      const lines = Object.entries({ Host: target.host, ...head }).map(([name, value]) => `${name}: ${value}`);
      socket.write(`PUT ${target.pathname}${target.search} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
    });
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
      if (answer.includes('\r\n\r\n') && /\}$/.test(answer)) {
        resolve(answer);
        socket.destroy();
      }
    });
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('the server waited for the body instead of answering')));
  });
}

describe('the round trip', () => {
  it('publish → upload → Active → download gives identical bytes, with ETag and Content-Length', async () => {
    const published = await publish(server, alice.token, 'alice-co', 'trip', '1.0.0');
    expect(published.status).toBe(201);
    const zip = await makeZip({ 'trip/__init__.py': 'print("hi")\n', 'README.md': '# trip\n'.repeat(100) });
    const uploaded = await uploadTo(published.body.signedUrl, zip);
    expect(uploaded.status, uploaded.text).toBe(200);
    const version = NodeVersion.parse(uploaded.body);
    expect(version).toMatchObject({
      id: published.body.node_version.id,
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
      archive_sha256: sha256(zip),
      archive_size: zip.length,
      downloadUrl: `${server.url}/archives/alice-co/trip/1.0.0/node.zip`,
    });

    const download = await fetch(version.downloadUrl!);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/zip');
    expect(download.headers.get('content-length')).toBe(String(zip.length));
    expect(download.headers.get('etag')).toBe(`"${sha256(zip)}"`);
    expect(Buffer.from(await download.arrayBuffer()).equals(zip)).toBe(true);
    const cached = await fetch(version.downloadUrl!, { headers: { 'if-none-match': `"${sha256(zip)}"` } });
    expect(cached.status).toBe(304);
    // one byte range, as a resumed download asks it; several ranges, or one past the end, get the whole archive
    const etag = `"${sha256(zip)}"`;
    for (const [header, start, end] of [
      ['bytes=10-29', 10, 29],
      ['bytes=-5', zip.length - 5, zip.length - 1],
      [`bytes=${zip.length - 3}-`, zip.length - 3, zip.length - 1],
    ] as const) {
      const part = await fetch(version.downloadUrl!, { headers: { range: header, 'if-range': etag } });
      expect(part.status, header).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes ${start}-${end}/${zip.length}`);
      expect(part.headers.get('content-length')).toBe(String(end - start + 1));
      expect(Buffer.from(await part.arrayBuffer()).equals(zip.subarray(start, end + 1))).toBe(true);
    }
    for (const headers of [
      { range: 'bytes=0-1,5-6' },
      { range: `bytes=${zip.length}-` },
      { range: 'bytes=0-9', 'if-range': '"other"' },
    ] as Record<string, string>[]) {
      const whole = await fetch(version.downloadUrl!, { headers });
      expect(whole.status, JSON.stringify(headers)).toBe(200);
      expect(Buffer.from(await whole.arrayBuffer()).equals(zip)).toBe(true);
    }

    const node = await api.get('/nodes/trip');
    expect(node.body.latest_version).toMatchObject({
      version: '1.0.0',
      downloadUrl: version.downloadUrl,
      archive_sha256: sha256(zip),
    });
  });

  it('answers 409 to publishing or uploading a version that has its archive', async () => {
    expectError(await publish(server, alice.token, 'alice-co', 'trip', '1.0.0'), 409, 'conflict');
    const again = await api.get('/nodes/trip/versions/1.0.0');
    const url = signUploadUrl(server.server.keys.upload, server.url, again.body.id);
    expectError(await uploadTo(url, await makeZip()), 409, 'conflict');
  });

  it('lets a retry before the upload get a fresh URL and upload with it', async () => {
    const first = await publish(server, alice.token, 'alice-co', 'retry-up', '1.0.0');
    // a failed upload: the archive is damaged on the way
    const zip = await makeZip();
    expectError(
      await uploadTo(first.body.signedUrl, zip, { 'x-content-sha256': sha256(Buffer.from('other')) }),
      400,
      'invalid_request',
    );
    expect((await api.get('/nodes/retry-up/versions/1.0.0')).body.status).toBe('NodeVersionStatusPending');
    const second = await publish(server, alice.token, 'alice-co', 'retry-up', '1.0.0', {
      node_version: { changelog: 'second try' },
    });
    expect(second.status).toBe(201);
    const uploaded = await uploadTo(second.body.signedUrl, zip);
    expect(uploaded.status, uploaded.text).toBe(200);
    expect(uploaded.body).toMatchObject({ changelog: 'second try', status: 'NodeVersionStatusActive' });
  });

  it('lets exactly one of racing uploads win; the others get 409', async () => {
    const published = await publish(server, alice.token, 'alice-co', 'race', '1.0.0');
    const zips = await Promise.all([1, 2, 3, 4].map((n) => makeZip({ 'x.py': `# ${n}\n`.repeat(500) })));
    const replies = await Promise.all(zips.map((zip) => uploadTo(published.body.signedUrl, zip)));
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
    const winner = zips[replies.findIndex((reply) => reply.status === 200)];
    const download = Buffer.from(
      await (await fetch(`${server.url}/archives/alice-co/race/1.0.0/node.zip`)).arrayBuffer(),
    );
    expect(download.equals(winner)).toBe(true);
  });
});

describe('upload refusals', () => {
  let signedUrl = '';
  let versionId = '';
  beforeAll(async () => {
    const published = await publish(server, alice.token, 'alice-co', 'refused', '1.0.0');
    signedUrl = published.body.signedUrl;
    versionId = published.body.node_version.id;
  });

  it('is 415 without Content-Type application/zip', async () => {
    const zip = await makeZip();
    expectError(
      await uploadTo(signedUrl, zip, { 'content-type': 'application/octet-stream' }),
      415,
      'unsupported_media_type',
    );
  });

  it('is 403 for a bad signature, one made for another version, or an expired URL', async () => {
    const zip = await makeZip();
    const url = new URL(signedUrl);
    url.searchParams.set('signature', '0'.repeat(64));
    expectError(await uploadTo(url.href, zip), 403, 'forbidden');
    const other = await publish(server, alice.token, 'alice-co', 'refused', '1.0.1');
    const swapped = new URL(other.body.signedUrl);
    swapped.pathname = `/uploads/${versionId}`;
    expectError(await uploadTo(swapped.href, zip), 403, 'forbidden');
    const expired = signUploadUrl(server.server.keys.upload, server.url, versionId, Date.now() - 16 * 60 * 1000);
    const reply = await uploadTo(expired, zip);
    expectError(reply, 403, 'forbidden');
    expect(reply.body.message).toMatch(/expired/);
    expectError(await uploadTo(`${server.url}/uploads/${versionId}`, zip), 403, 'forbidden');
  });

  it('is 404 for a signed URL of a version that does not exist', async () => {
    expectError(
      await uploadTo(signUploadUrl(server.server.keys.upload, server.url, randomUUID()), await makeZip()),
      404,
      'not_found',
    );
  });

  it('is 413 over --max-archive, by Content-Length or by the bytes of a chunked body', async () => {
    const big = await makeZip({ 'data.bin': randomBytes(70 * 1024) });
    expect(big.length).toBeGreaterThan(64 * 1024);
    expectError(await uploadTo(signedUrl, big), 413, 'payload_too_large');
    // chunked: no Content-Length, the limit is found while reading
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(signedUrl, { method: 'PUT', headers: { 'content-type': 'application/zip' } }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write(big.subarray(0, 40 * 1024));
      req.end(big.subarray(40 * 1024));
    });
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error).toBe('payload_too_large');
  });

  it('answers 415, 403 and 413 at once, without reading the body', async () => {
    const url = new URL(signedUrl);
    const badSig = new URL(signedUrl);
    badSig.searchParams.set('signature', 'f'.repeat(64));
    // bodies announced but never sent: an answer proves the server did not wait for them
    const huge = { 'Content-Length': String(10 * 1024 * 1024 * 1024) };
    const withinLimit = { 'Content-Length': String(60 * 1024) };
    expect(await headOnly(url.href, { ...huge, 'Content-Type': 'text/plain' })).toMatch(
      /^HTTP\/1\.1 415 [\s\S]*[Cc]onnection: close/,
    );
    expect(await headOnly(url.href, { ...huge, 'Content-Type': 'application/zip' })).toMatch(
      /^HTTP\/1\.1 413 [\s\S]*[Cc]onnection: close/,
    );
    expect(await headOnly(badSig.href, { ...withinLimit, 'Content-Type': 'application/zip' }, 'PK')).toMatch(
      /^HTTP\/1\.1 403 [\s\S]*[Cc]onnection: close/,
    );
  });

  it('is 400 for a SHA-256 mismatch, a body that is not a zip, or too much unpacked', async () => {
    const zip = await makeZip();
    const mismatch = await uploadTo(signedUrl, zip, { 'x-content-sha256': 'a'.repeat(64) });
    expectError(mismatch, 400, 'invalid_request');
    expect(mismatch.body.message).toContain(sha256(zip));
    expectError(await uploadTo(signedUrl, zip, { 'x-content-sha256': 'not-hex' }), 400, 'invalid_request');
    expectError(await uploadTo(signedUrl, Buffer.from('this is not a zip at all')), 400, 'invalid_request');
    const bomb = await makeZip({ 'zeros.bin': Buffer.alloc(300 * 1024) });
    expect(bomb.length).toBeLessThan(64 * 1024);
    const reply = await uploadTo(signedUrl, bomb);
    expectError(reply, 400, 'invalid_request');
    expect(reply.body.message).toMatch(/expands/);
    // nothing was kept: the version still takes a good archive
    expect((await api.get(`/nodes/refused/versions/1.0.0`)).body.archive_sha256).toBeUndefined();
    expect((await uploadTo(signedUrl, zip)).status).toBe(200);
  });

  it('is 403 once the token that published is revoked, or its user is no longer a member (the URL was signed before)', async () => {
    const owner = await createUser(server, 'revoker');
    await createPublisher(server, owner, 'revoke-urls');
    const pat = await createPat(server, owner, 'revoke-urls');
    const byPat = await publish(server, pat, 'revoke-urls', 'revoked-url', '1.0.0');
    const leaver = await createUser(server, 'leaver');
    await api.post('/publishers/revoke-urls/members', { token: owner.token, body: { user: leaver.id } });
    expect((await api.post('/users/me/invitations/revoke-urls/accept', { token: leaver.token })).status).toBe(200);
    const byMember = await publish(server, leaver.token, 'revoke-urls', 'revoked-url', '1.1.0');
    const spare = (await api.post('/users/me/tokens', { token: owner.token, body: { name: 'spare' } })).body;
    const byUserToken = await publish(server, spare.token, 'revoke-urls', 'revoked-url', '1.2.0');
    const live = await publish(server, owner.token, 'revoke-urls', 'revoked-url', '1.3.0');
    for (const reply of [byPat, byMember, byUserToken, live]) expect(reply.status, reply.text).toBe(201);

    const [patRow] = (await api.get('/publishers/revoke-urls/tokens', { token: owner.token })).body;
    expect((await api.delete(`/publishers/revoke-urls/tokens/${patRow.id}`, { token: owner.token })).status).toBe(204);
    expect((await api.delete(`/publishers/revoke-urls/members/${leaver.id}`, { token: owner.token })).status).toBe(204);
    expect((await api.delete(`/users/me/tokens/${spare.id}`, { token: owner.token })).status).toBe(204);
    const zip = await makeZip();
    for (const reply of [byPat, byMember, byUserToken]) {
      const refused = await uploadTo(reply.body.signedUrl, zip);
      expectError(refused, 403, 'forbidden');
      expect(refused.body.message).toMatch(/revoked|no longer a member/);
    }
    // nothing was stored; a URL signed for a live token still works
    expect((await api.get('/nodes/revoked-url/versions/1.0.0', { token: owner.token })).body.status).toBe(
      'NodeVersionStatusPending',
    );
    expect((await uploadTo(live.body.signedUrl, zip)).status).toBe(200);
  });

  it('is 403 banned for a version of a banned node', async () => {
    const published = await publish(server, alice.token, 'alice-co', 'to-ban', '1.0.0');
    await api.put('/publishers/alice-co/nodes/to-ban', {
      token: server.adminToken,
      body: { status: 'NodeStatusBanned' },
    });
    expectError(await uploadTo(published.body.signedUrl, await makeZip()), 403, 'banned');
  });
});

describe('versions, latest_version and install through the API', () => {
  it('orders by semver and picks latest_version as DESIGN.md defines it', async () => {
    for (const v of ['1.0.0', '1.10.0', '1.2.0', '2.0.0-beta.1'])
      await publishAndUpload(server, alice.token, 'alice-co', 'lv', v);
    await publish(server, alice.token, 'alice-co', 'lv', '3.0.0'); // Pending: never latest
    const latest = async () => (await api.get('/nodes/lv')).body.latest_version?.version;
    expect(await latest()).toBe('1.10.0');
    expect((await api.get('/nodes/lv/versions')).body.map((v: { version: string }) => v.version)).toEqual([
      '3.0.0',
      '2.0.0-beta.1',
      '1.10.0',
      '1.2.0',
      '1.0.0',
    ]);
    await api.put('/publishers/alice-co/nodes/lv/versions/1.10.0', { token: alice.token, body: { deprecated: true } });
    expect(await latest()).toBe('1.2.0');
    for (const v of ['1.0.0', '1.2.0'])
      await api.put(`/publishers/alice-co/nodes/lv/versions/${v}`, { token: alice.token, body: { deprecated: true } });
    expect(await latest()).toBe('2.0.0-beta.1');
    await api.put('/publishers/alice-co/nodes/lv/versions/2.0.0-beta.1', {
      token: alice.token,
      body: { deprecated: true },
    });
    expect(await latest()).toBe('2.0.0-beta.1');
    for (const v of ['1.0.0', '1.2.0', '1.10.0', '2.0.0-beta.1']) {
      await api.put(`/publishers/alice-co/nodes/lv/versions/${v}`, {
        token: alice.token,
        body: { status: 'NodeVersionStatusDeleted' },
      });
    }
    expect(await latest()).toBeUndefined();
  });

  it('install answers the latest Active version (or the one asked) with its downloadUrl; a download counts once the archive is served whole', async () => {
    await publishAndUpload(server, alice.token, 'alice-co', 'inst', '1.0.0');
    await publishAndUpload(server, alice.token, 'alice-co', 'inst', '1.1.0');
    let reply = await api.get('/nodes/inst/install');
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      version: '1.1.0',
      downloadUrl: `${server.url}/archives/alice-co/inst/1.1.0/node.zip`,
    });
    reply = await api.get('/nodes/INST/install?version=1.0.0');
    expect(reply.body.version).toBe('1.0.0');
    expect((await api.get('/nodes/inst')).body.downloads).toBe(0); // asking is not downloading
    const downloads = async () => {
      // counted after the last byte went out: give the server its turn
      await new Promise((resolve) => setTimeout(resolve, 50));
      return (await api.get('/nodes/inst')).body.downloads;
    };
    await (await fetch(reply.body.downloadUrl)).arrayBuffer();
    expect(await downloads()).toBe(1);
    // a part (a range) and a HEAD are not a download
    await (await fetch(reply.body.downloadUrl, { headers: { range: 'bytes=0-9' } })).arrayBuffer();
    await fetch(reply.body.downloadUrl, { method: 'HEAD' });
    expect(await downloads()).toBe(1);
    expectError(await api.get('/nodes/inst/install?version=9.0.0'), 404, 'not_found');
    await api.put('/publishers/alice-co/nodes/inst/versions/1.0.0', {
      token: alice.token,
      body: { status: 'NodeVersionStatusDeleted' },
    });
    expectError(await api.get('/nodes/inst/install?version=1.0.0'), 404, 'not_found');
    await (await fetch(`${server.url}/archives/alice-co/inst/1.1.0/node.zip`)).arrayBuffer();
    expect(await downloads()).toBe(2);
    // the same client fetching the same version again the same day is not counted again
    for (let i = 0; i < 20; i++)
      await (await fetch(`${server.url}/archives/alice-co/inst/1.1.0/node.zip`)).arrayBuffer();
    expect(await downloads()).toBe(2);
    // sorted by downloads, most first: the node stands before every node downloaded less
    const sorted = (await api.get('/nodes?sort=downloads&limit=100')).body.nodes as { id: string; downloads: number }[];
    expect(sorted.map((n) => n.downloads)).toEqual([...sorted.map((n) => n.downloads)].sort((a, b) => b - a));
    expect(sorted.findIndex((n) => n.id === 'inst')).toBeLessThan(
      Math.max(
        sorted.findIndex((n) => n.downloads < 2),
        0,
      ) || sorted.length,
    );
  });

  it('each server has its own upload memory budget', async () => {
    const other = await startServer();
    const budget = server.server.uploadMemory;
    expect(other.server.uploadMemory.max).toBe(64 * 1024 * 1024);
    expect(budget.take(budget.max)).toBe(true);
    try {
      expect(other.server.uploadMemory.held).toBe(0);
      expect(other.server.uploadMemory.take(1)).toBe(true);
      other.server.uploadMemory.give(1);
    } finally {
      budget.give(budget.max);
      await other.close();
    }
  });

  it('a download the client breaks off is not counted', async () => {
    // larger than what the sockets' buffers on both sides can hold, so the server cannot hand it all over
    const roomy = await startServer({ maxArchive: 64 * 1024 * 1024 });
    const owner = await createUser(roomy, 'carol');
    await createPublisher(roomy, owner, 'carol-co');
    const big = await makeZip({ 'big.safetensors': randomBytes(32 * 1024 * 1024) });
    const published = await publish(roomy, owner.token, 'carol-co', 'cut', '1.0.0');
    expect((await uploadTo(published.body.signedUrl, big)).status).toBe(200);
    const url = new URL(`${roomy.url}/archives/carol-co/cut/1.0.0/node.zip`);
    // read the head of the answer, then close the connection with most of the body unread
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(url.port), '127.0.0.1', () =>
        socket.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`),
      );
      socket.once('data', () => {
        socket.destroy();
        resolve();
      });
      socket.on('error', reject);
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await call(roomy.url, 'GET', '/nodes/cut')).body.downloads).toBe(0);
    await (await fetch(url)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await call(roomy.url, 'GET', '/nodes/cut')).body.downloads).toBe(1);
    await roomy.close();
  });

  it('serves archives of other statuses to members and admins only; 404 for unknown paths', async () => {
    const url = `${server.url}/archives/alice-co/inst/1.0.0/node.zip`;
    expect((await fetch(url)).status).toBe(404);
    expect((await fetch(url, { headers: { authorization: `Bearer ${alice.token}` } })).status).toBe(200);
    expect((await fetch(url, { headers: { authorization: `Bearer ${server.adminToken}` } })).status).toBe(200);
    expectError(await api.get('/archives/other-co/inst/1.1.0/node.zip'), 404, 'not_found');
    expectError(await api.get('/archives/alice-co/inst/9.9.9/node.zip'), 404, 'not_found');
    expectError(await api.get('/archives/alice-co/nope/1.0.0/node.zip'), 404, 'not_found');
  });
});

describe('review modes and public URLs', () => {
  it('--review manual keeps uploaded versions Pending until an admin activates them', async () => {
    const manual = await startServer({ review: 'manual' });
    const bob = await createUser(manual, 'bob');
    await createPublisher(manual, bob, 'bob-co');
    const pat = await createPat(manual, bob, 'bob-co');
    const uploaded = await publishAndUpload(manual, pat, 'bob-co', 'slow', '1.0.0');
    expect(uploaded).toMatchObject({
      status: 'NodeVersionStatusPending',
      downloadUrl: `${manual.url}/archives/bob-co/slow/1.0.0/node.zip`,
    });
    expectError(await call(manual.url, 'GET', '/nodes/slow/install'), 404, 'not_found');
    expect((await fetch(uploaded.downloadUrl)).status).toBe(404);
    expect((await fetch(uploaded.downloadUrl, { headers: { authorization: `Bearer ${pat}` } })).status).toBe(200);
    expectError(
      await call(manual.url, 'PUT', '/publishers/bob-co/nodes/slow/versions/1.0.0', {
        token: pat,
        body: { status: 'NodeVersionStatusActive' },
      }),
      403,
      'forbidden',
    );
    const approved = await call(manual.url, 'PUT', '/publishers/bob-co/nodes/slow/versions/1.0.0', {
      token: manual.adminToken,
      body: { status: 'NodeVersionStatusActive', status_reason: 'reviewed' },
    });
    expect(approved.body).toMatchObject({ status: 'NodeVersionStatusActive', status_reason: 'reviewed' });
    expect((await call(manual.url, 'GET', '/nodes/slow/install')).body.version).toBe('1.0.0');
    await manual.close();
  });

  it('builds download URLs on each response, following --public-url after a restart', async () => {
    const first = await startServer();
    const bob = await createUser(first, 'bob');
    await createPublisher(first, bob, 'bob-co');
    await publishAndUpload(first, bob.token, 'bob-co', 'moving', '1.0.0');
    await first.close();
    const second = await startServer({
      dataDir: first.dataDir,
      adminToken: first.adminToken,
      publicUrl: 'https://registry.example.org/base/',
    });
    const node = await call(second.url, 'GET', '/nodes/moving');
    expect(node.body.latest_version.downloadUrl).toBe(
      'https://registry.example.org/base/archives/bob-co/moving/1.0.0/node.zip',
    );
    const published = await publish(second, bob.token, 'bob-co', 'moving', '1.1.0');
    expect(published.body.signedUrl.startsWith('https://registry.example.org/base/uploads/')).toBe(true);
    // the signature covers the route path, not the prefix: the same query works on the real address
    const signed = new URL(published.body.signedUrl);
    expect(
      (await uploadTo(`${second.url}/uploads/${published.body.node_version.id}${signed.search}`, await makeZip()))
        .status,
    ).toBe(200);
    await second.close();
  });
});
