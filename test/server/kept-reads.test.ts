// The listener's shortcut for anonymous reads of a kept node answer (src/server/kept-reads.ts): it
// writes the very bytes the routes write (a query string sends a request the long way), keeps their
// rules (ETag/304, HEAD, Deleted 404, banned 403 except admins, the access log), and sees every write
// at once. Also the clientError handler's own record of answers under way (no private fields of Node).
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createTaskStore } from '../../src/server/proxy/store.js';
import { openDatabase } from '../../src/server/store/db.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { client, createPublisher, createUser, expectError, makeZip, publish, publishAndUpload, uploadTo, type TestUser } from './fixtures.js';

let server: TestServer;
let alice: TestUser;
let api: ReturnType<typeof client>;
const logged: string[] = [];

beforeAll(async () => {
  server = await startServer({ accessLog: (line) => logged.push(line) });
  alice = await createUser(server, 'alice');
  api = client(server);
  await createPublisher(server, alice, 'alice-co');
  await publishAndUpload(server, alice.token, 'alice-co', 'kept', '1.0.0');
});
afterAll(() => server.close());

/** Sends raw requests on one connection and returns what came back until the server closed it. */
const raw = (requests: string[]) => rawTo(server, requests);
function rawTo(to: TestServer, requests: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(to.url).port), '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.write(requests.join(''));
  });
}

const count = (text: string, what: string) => text.split(what).length - 1;
const withoutDate = (text: string) => text.replace(/\r\nDate: [^\r]*/g, '');

describe('the shortcut for anonymous reads', () => {
  it('writes byte for byte what the routes write, for GET, HEAD, 304 and a node id in another case', async () => {
    const etag = (await api.get('/nodes/kept')).headers.get('etag')!;
    const requests = (path: string) => [
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      `HEAD ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: ${etag}\r\n\r\n`,
      `HEAD ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: "other", W/${etag}\r\n\r\n`,
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: "other"\r\n\r\n`,
      `GET ${path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`,
    ];
    for (const path of ['/nodes/kept', '/nodes/KePt']) {
      const before = server.server.keptReads();
      // the last request is HTTP/1.0: the server closes the connection after it
      const short = await raw(requests(path));
      expect(server.server.keptReads() - before, path).toBe(6);
      const long = await raw(requests(`${path}?`));
      expect(server.server.keptReads() - before, 'a query string goes the long way').toBe(6);
      expect(count(short, 'HTTP/1.1 200 OK'), short).toBe(4);
      expect(count(short, 'HTTP/1.1 304 Not Modified')).toBe(2);
      expect(withoutDate(short)).toBe(withoutDate(long));
    }
  });

  it('takes a Host on any port the routes take, and leaves the ones they refuse', async () => {
    const request = (host: string, path = '/nodes/kept') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    const taken = ['127.0.0.1:60000', 'localhost:65535', 'example.com:61234', 'example.com:0'];
    const before = server.server.keptReads();
    const short = await raw([...taken.map((host) => request(host)), 'GET /nodes/kept HTTP/1.0\r\nHost: 127.0.0.1:60001\r\n\r\n']);
    expect(server.server.keptReads() - before, short).toBe(taken.length + 1);
    const long = await raw([...taken.map((host) => request(host, '/nodes/kept?')), 'GET /nodes/kept? HTTP/1.0\r\nHost: 127.0.0.1:60001\r\n\r\n']);
    expect(withoutDate(short)).toBe(withoutDate(long));
    expect(count(short, 'HTTP/1.1 200 OK')).toBe(taken.length + 1);

    // Refused the long way (a port out of range, not an address), or changed by the URL parser (the default port, leading zeros): never taken.
    const left = ['1.2.3.999:60000', 'localhost:65536', 'localhost:', 'localhost:80', 'localhost:00080'];
    const answers = await raw([...left.map((host) => request(host)), 'GET /nodes/kept HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n']);
    expect(count(answers, 'HTTP/1.1 400 Bad Request'), answers).toBe(3);
    expect(count(answers, 'HTTP/1.1 200 OK'), answers).toBe(3);
    expect(server.server.keptReads() - before).toBe(taken.length + 2);
  });

  it('logs each read it answers as the routes do', async () => {
    logged.length = 0;
    const before = server.server.keptReads();
    await api.get('/nodes/kept');
    await api.get('/nodes/kept?long');
    expect(server.server.keptReads() - before).toBe(1);
    expect(logged.map((line) => line.replace(/ [\d.]+ms$/, ' Nms'))).toEqual(['GET /nodes/kept 200 Nms', 'GET /nodes/kept 200 Nms']);
  });

  it('leaves reads with a token, a body or an unusual Host to the routes, which answer them', async () => {
    const before = server.server.keptReads();
    expect((await api.get('/nodes/kept', { token: alice.token })).status).toBe(200);
    expect((await api.get('/nodes/kept', { headers: { authorization: 'Basic eDp5' } })).status).toBe(200);
    const answers = await raw([
      'GET /nodes/kept HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}',
      'GET /nodes/kept HTTP/1.1\r\nHost: [::1]:80\r\n\r\n',
      'GET /nodes/kept HTTP/1.1\r\n\r\n',
      'GET /nodes/kept HTTP/1.1\r\nHost: 1.2.3.999:80\r\nConnection: close\r\n\r\n',
    ]);
    expect(count(answers, 'HTTP/1.1 200 OK'), answers).toBe(2);
    expect(answers).toContain('Missing host header');
    expect(answers).toContain('Invalid URL');
    expect(server.server.keptReads()).toBe(before);
  });

  it('sees each write on the next read, and keeps Deleted 404 and banned 403 (except to admins)', async () => {
    const first = await api.get('/nodes/kept');
    expect((await api.put('/publishers/alice-co/nodes/kept', { token: alice.token, body: { description: 'changed' } })).status).toBe(200);
    await api.get('/nodes/kept'); // built again by the routes
    const before = server.server.keptReads();
    const changed = await api.get('/nodes/kept', { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(server.server.keptReads() - before).toBe(1);
    expect(changed.status).toBe(200);
    expect(changed.body.description).toBe('changed');

    const admin = server.adminToken;
    expect((await api.put('/publishers/alice-co', { token: admin, body: { status: 'PublisherStatusBanned' } })).status).toBe(200);
    expect((await api.get('/nodes/kept', { token: admin })).status).toBe(200); // kept again, as an admin sees it
    expectError(await api.get('/nodes/kept'), 403, 'banned');
    expectError(await api.get('/nodes/kept', { headers: { 'if-none-match': changed.headers.get('etag')! } }), 403, 'banned');
    expect((await api.put('/publishers/alice-co', { token: admin, body: { status: 'PublisherStatusActive' } })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await api.get('/nodes/kept')).status).toBe(200); // built, then kept

    expect((await api.put('/publishers/alice-co/nodes/kept', { token: alice.token, body: { status: 'NodeStatusDeleted' } })).status).toBe(200);
    expect((await api.get('/nodes/kept', { token: alice.token })).status).toBe(200); // a member still sees it
    expectError(await api.get('/nodes/kept'), 404, 'not_found');
    expect(server.server.keptReads() - before).toBe(2); // the first read and the second after the ban was lifted, not the refusals
  });

  it('sees a write by another server on the same SQLite file within 100 ms, and its own writes at once', async () => {
    await publishAndUpload(server, alice.token, 'alice-co', 'shared', '1.0.0');
    const other = await startServer({ dataDir: server.dataDir, adminToken: server.adminToken });
    try {
      const describe = (text: string, through: TestServer) =>
        client(through).put('/publishers/alice-co/nodes/shared', { token: alice.token, body: { description: text } });
      for (let i = 0; i < 2; i++) expect((await api.get('/nodes/shared')).status).toBe(200); // built, then kept
      const before = server.server.keptReads();
      expect((await describe('written by the other server', other)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 150));
      await api.get('/nodes/shared'); // built again by the routes, from the store
      expect((await api.get('/nodes/shared')).body.description).toBe('written by the other server');
      expect((await describe('written here', server)).status).toBe(200);
      await api.get('/nodes/shared');
      expect((await api.get('/nodes/shared')).body.description).toBe('written here');
      expect(server.server.keptReads() - before).toBe(2); // each second read came from the shortcut
    } finally {
      await other.close();
    }
  });
});

describe('the shortcut for reviews', () => {
  const review = (path: string, token: string, extra = '') =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n${extra}\r\n`;
  const last = (path: string, token: string) => review(path, token, 'Connection: close\r\n');

  it('writes byte for byte what the route writes, and logs the same line', async () => {
    await publishAndUpload(server, alice.token, 'alice-co', 'rated', '1.0.0');
    const bob = await createUser(server, 'bob-reviews');
    logged.length = 0;
    const before = server.server.keptReviews();
    const short = await raw([review('/nodes/rated/reviews?star=4', bob.token), last('/nodes/RaTeD/reviews?star=4', bob.token)]);
    expect(server.server.keptReviews() - before).toBe(2);
    const long = await raw([review('/nodes/rated/reviews?star=4&', bob.token), last('/nodes/RaTeD/reviews?star=4&', bob.token)]);
    expect(server.server.keptReviews() - before, 'another query goes the long way').toBe(2);
    expect(count(short, 'HTTP/1.1 200 OK'), short).toBe(2);
    expect(short).toContain('"rating":4');
    expect(withoutDate(short)).toBe(withoutDate(long));
    expect(logged.map((line) => line.replace(/ [\d.]+ms$/, ' Nms'))).toEqual(
      ['/nodes/rated', '/nodes/RaTeD', '/nodes/rated', '/nodes/RaTeD'].map((path) => `POST ${path}/reviews 200 Nms`),
    );
    // A second review replaces the first, through either way.
    expect((await api.post('/nodes/rated/reviews?star=2', { token: bob.token })).body.rating).toBe(2);
    expect(server.server.keptReviews() - before).toBe(3);
  });

  it('leaves every refusal to the route, which answers it in the errors\' shape', async () => {
    const before = server.server.keptReviews();
    expectError(await api.post('/nodes/rated/reviews?star=3'), 401, 'unauthorized');
    expectError(await api.post('/nodes/rated/reviews?star=3', { token: 'nrg_u_unknown' }), 401, 'unauthorized');
    expectError(await api.post('/nodes/missing/reviews?star=3', { token: alice.token }), 404, 'not_found');
    for (const star of ['0', '6', '33', '3.5', '', '03x']) {
      expectError(await api.post(`/nodes/rated/reviews?star=${star}`, { token: alice.token }), 400, 'invalid_request');
    }
    expect((await api.post('/nodes/rated/reviews?star=3', { token: alice.token, body: {} })).status).toBe(200); // a body: the long way
    const banned = await api.put('/publishers/alice-co', { token: server.adminToken, body: { status: 'PublisherStatusBanned' } });
    expect(banned.status).toBe(200);
    try {
      expectError(await api.post('/nodes/rated/reviews?star=3', { token: alice.token }), 403, 'banned');
    } finally {
      expect((await api.put('/publishers/alice-co', { token: server.adminToken, body: { status: 'PublisherStatusActive' } })).status).toBe(200);
    }
    expect(server.server.keptReviews()).toBe(before);
  });

  it('leaves two Authorization headers to the route, which reads them joined and refuses them (401)', async () => {
    const bob = await createUser(server, 'bob-twice');
    const twice = (token: string, query = '') =>
      `POST /nodes/rated/reviews?star=1${query} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${bob.token}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`;
    const before = server.server.keptReviews();
    for (const token of [bob.token, 'nrg_u_other']) {
      const short = await raw([twice(token)]);
      const long = await raw([twice(token, '&')]);
      expect(short.split('\r\n')[0], short).toBe('HTTP/1.1 401 Unauthorized');
      expect(withoutDate(short)).toBe(withoutDate(long));
    }
    expect(server.server.keptReviews()).toBe(before);
    expect((await api.get('/nodes/rated')).body.rating, 'no review was written').not.toBe(1);
  });

  it('refuses a revoked token at once', async () => {
    const created = await api.post('/users/me/tokens', { token: alice.token, body: { name: 'phone' } });
    expect(created.status, created.text).toBe(201);
    const before = server.server.keptReviews();
    expect((await api.post('/nodes/rated/reviews?star=5', { token: created.body.token })).status).toBe(200);
    expect((await api.delete(`/users/me/tokens/${created.body.id}`, { token: alice.token })).status).toBe(204);
    expectError(await api.post('/nodes/rated/reviews?star=5', { token: created.body.token }), 401, 'unauthorized');
    expect(server.server.keptReviews() - before).toBe(1);
  });

  it('is not taken while changes are rate limited: only the route counts them', async () => {
    const limited = await startServer({ rateLimit: 2 });
    try {
      const carol = await createUser(limited, 'carol');
      await createPublisher(limited, carol, 'carol-co');
      await publishAndUpload(limited, carol.token, 'carol-co', 'limited', '1.0.0');
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push((await client(limited).post('/nodes/limited/reviews?star=5', { token: carol.token })).status);
      expect(answers).toContain(429);
      expect(limited.server.keptReviews()).toBe(0);
    } finally {
      await limited.close();
    }
  });
});

describe('the clientError handler', () => {
  it('closes a connection whose answer has begun instead of writing its error into it', async () => {
    const published = await publish(server, alice.token, 'alice-co', 'big', '1.0.0');
    expect(published.status, published.text).toBe(201);
    const zip = await makeZip({ 'weights.bin': randomBytes(8 * 1024 * 1024) });
    expect((await uploadTo(published.body.signedUrl, zip)).status).toBe(200);
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.on('error', () => {});
    socket.write('GET /archives/alice-co/big/1.0.0/node.zip HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // Once the download's headers are here, stop reading (the answer stays under way), then send garbage.
    await new Promise<void>((resolve) => socket.once('data', (chunk: Buffer) => (chunks.push(chunk), socket.pause(), resolve())));
    socket.write('NOT HTTP AT ALL\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    await closed;
    const received = Buffer.concat(chunks);
    expect(received.subarray(0, 15).toString()).toBe('HTTP/1.1 200 OK');
    expect(received.includes('invalid_request')).toBe(false);
    expect(received.length).toBeLessThan(zip.length);
  });
});

describe('the shortcut\'s 503', () => {
  it('writes the header names as the route\'s 503 has them, byte for byte', async () => {
    // A store that can be cut (ECONNREFUSED, as a database out of reach) and reads stamps asynchronously, as PostgreSQL's
    const dir = tempDir('nodereg-data-');
    const db = openDatabase(join(dir, 'cut.db'));
    const sqlite = createSqliteRegistryStore(db);
    let cut = false;
    const store = new Proxy(sqlite, {
      get(target, name) {
        if (name === 'getNodeStampNow') return undefined;
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (cut) return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const cutServer = await startServer({ dataDir: dir, database: { store, tasks: createTaskStore(db), close: () => void db.close() } });
    try {
      cut = true;
      const ask = (path: string) => rawTo(cutServer, [`GET ${path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`]);
      const before = cutServer.server.keptReads();
      const short = await ask('/nodes/kept');
      const long = await ask('/nodes/kept?');
      expect(short).toMatch(/^HTTP\/1\.1 503 /);
      expect(long).toMatch(/^HTTP\/1\.1 503 /);
      const names = (text: string) => text.split('\r\n\r\n')[0].split('\r\n').slice(1).map((line) => line.slice(0, line.indexOf(':')));
      expect(names(short)).toEqual(names(long));
      expect(withoutDate(short)).toBe(withoutDate(long));
      expect(cutServer.server.keptReads()).toBe(before); // a refusal is not counted as a kept read
    } finally {
      cut = false;
      await cutServer.close();
    }
  });
});
