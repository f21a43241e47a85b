// GET /nodes/{id} keeps each node's serialised answer (src/server/node-answers.ts) and serves it from
// its route while the node's generation in the store is the one it was built at: a cached answer
// reads only the node's state, writes the same bytes as a built one, keeps the read rules (ETag/304,
// HEAD, Deleted 404, banned 403 except to admins), is logged like any answer, and every write is seen
// on the next read. A review answers the node with its new rating, from the same cache.
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskStore } from '../../../src/server/proxy/store.js';
import { openDatabase } from '../../../src/server/store/db.js';
import type { RegistryStore } from '../../../src/server/store/registry-store.js';
import { createSqliteRegistryStore } from '../../../src/server/store/sqlite-registry-store.js';
import { startServer, tempDir, type TestServer } from '../../helpers.js';
import { client, createPublisher, createUser, expectError, publishAndUpload, type TestUser } from '../fixtures.js';

/** A server on a SQLite store that counts the store's calls by name, and can be cut (ECONNREFUSED, a database out of reach). */
async function countingServer(options: Parameters<typeof startServer>[0] = {}) {
  const dir = tempDir('nodereg-data-');
  const db = openDatabase(join(dir, 'registry.db'));
  const sqlite = createSqliteRegistryStore(db);
  const calls = new Map<string, number>();
  const state = { cut: false };
  const store = new Proxy(sqlite, {
    get(target, name) {
      const value = Reflect.get(target, name) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(name), (calls.get(String(name)) ?? 0) + 1);
        if (state.cut)
          return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as RegistryStore;
  const server = await startServer({
    ...options,
    dataDir: dir,
    database: { store, tasks: createTaskStore(db), close: () => void db.close() },
  });
  return { server, state, reads: (name: string) => calls.get(name) ?? 0 };
}

let counted: Awaited<ReturnType<typeof countingServer>>;
let server: TestServer;
let alice: TestUser;
let api: ReturnType<typeof client>;
const logged: string[] = [];
/** Reads of whole node rows so far: a cached answer makes none. */
const nodeRowReads = () => counted.reads('getNode');

beforeAll(async () => {
  counted = await countingServer({ accessLog: (line) => logged.push(line) });
  server = counted.server;
  alice = await createUser(server, 'alice');
  api = client(server);
  await createPublisher(server, alice, 'alice-co');
  await publishAndUpload(server, alice.token, 'alice-co', 'kept', '1.0.0');
});
afterAll(() => server.close());

/** Sends raw requests on one connection and returns what came back until the server closed it. */
function raw(requests: string[], to: TestServer = server): Promise<string> {
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
// the date, and the request id each answer has of its own
const withoutDate = (text: string) => text.replace(/\r\n(Date|X-Request-Id): [^\r]*/gi, '');

describe('cached node answers', () => {
  it('write the bytes a built answer writes, for GET, HEAD, 304 and a node id in another case, reading only the node state', async () => {
    // ("" would now leave the description as it is: the write below stores the value it already has)
    const same = { token: alice.token, body: { description: 'a kept node' } };
    expect((await api.put('/publishers/alice-co/nodes/kept', same)).status).toBe(200);
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
      const before = nodeRowReads();
      // the last request is HTTP/1.0: the server closes the connection after it
      const cached = await raw(requests(path));
      expect(nodeRowReads() - before, path).toBe(0);
      expect(count(cached, 'HTTP/1.1 200 OK'), cached).toBe(4);
      expect(count(cached, 'HTTP/1.1 304 Not Modified')).toBe(2);
      // A write moves the generation: the next read builds the answer again, with the same bytes.
      expect((await api.put('/publishers/alice-co/nodes/kept', same)).status).toBe(200);
      const written = nodeRowReads();
      const built = await raw(requests(path).slice(0, 1).concat('GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n'));
      expect(nodeRowReads() - written, 'built again after the write').toBe(1);
      expect(withoutDate(built).split('HTTP/1.1 200 OK')[1]).toBe(withoutDate(cached).split('HTTP/1.1 200 OK')[1]);
    }
  });

  it("answer a Host on any port, and refuse the ones that are no host in the errors' shape", async () => {
    const request = (host: string) => `GET /nodes/kept HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    const taken = ['127.0.0.1:60000', 'localhost:65535', 'example.com:61234', 'example.com:0', '127.0.0.1:60001'];
    const answers = await raw([...taken.map(request), 'GET /nodes/kept HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n']);
    expect(count(answers, 'HTTP/1.1 200 OK'), answers).toBe(taken.length + 1);

    const left = ['1.2.3.999:60000', 'localhost:65536', 'localhost:', 'localhost:80', 'localhost:00080'];
    const refused = await raw([
      ...left.map(request),
      'GET /nodes/kept HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    ]);
    expect(count(refused, 'HTTP/1.1 400 Bad Request'), refused).toBe(3);
    expect(count(refused, 'HTTP/1.1 200 OK'), refused).toBe(3);
  });

  it('are logged as every answer is', async () => {
    logged.length = 0;
    await api.get('/nodes/kept');
    await api.get('/nodes/kept?query');
    expect(logged.map((line) => line.replace(/ [\d.]+ms .*$/, ' Nms'))).toEqual([
      'GET /nodes/kept 200 Nms',
      'GET /nodes/kept 200 Nms',
    ]);
  });

  it('serve reads with a token, a body or an unusual Host', async () => {
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
  });

  it('see each write on the next read, and keep Deleted 404 and banned 403 (except to admins)', async () => {
    const first = await api.get('/nodes/kept');
    expect(
      (await api.put('/publishers/alice-co/nodes/kept', { token: alice.token, body: { description: 'changed' } }))
        .status,
    ).toBe(200);
    await api.get('/nodes/kept'); // built again
    const before = nodeRowReads();
    const changed = await api.get('/nodes/kept', { headers: { 'if-none-match': first.headers.get('etag')! } });
    expect(nodeRowReads() - before, 'served from the cache').toBe(0);
    expect(changed.status).toBe(200);
    expect(changed.body.description).toBe('changed');

    const admin = server.adminToken;
    expect(
      (await api.put('/publishers/alice-co', { token: admin, body: { status: 'PublisherStatusBanned' } })).status,
    ).toBe(200);
    expect((await api.get('/nodes/kept', { token: admin })).status).toBe(200); // cached again, as an admin sees it
    expectError(await api.get('/nodes/kept'), 403, 'banned');
    expectError(
      await api.get('/nodes/kept', { headers: { 'if-none-match': changed.headers.get('etag')! } }),
      403,
      'banned',
    );
    expect(
      (await api.put('/publishers/alice-co', { token: admin, body: { status: 'PublisherStatusActive' } })).status,
    ).toBe(200);
    for (let i = 0; i < 2; i++) expect((await api.get('/nodes/kept')).status).toBe(200); // built, then cached

    expect(
      (await api.put('/publishers/alice-co/nodes/kept', { token: alice.token, body: { status: 'NodeStatusDeleted' } }))
        .status,
    ).toBe(200);
    expect((await api.get('/nodes/kept', { token: alice.token })).status).toBe(200); // a member still sees it
    expectError(await api.get('/nodes/kept'), 404, 'not_found');
    expect(
      (await api.put('/publishers/alice-co/nodes/kept', { token: alice.token, body: { status: 'NodeStatusActive' } }))
        .status,
    ).toBe(200);
  });

  it('see a write by another server on the same SQLite file, and their own writes, on the next read', async () => {
    await publishAndUpload(server, alice.token, 'alice-co', 'shared', '1.0.0');
    const other = await startServer({ dataDir: server.dataDir, adminToken: server.adminToken });
    try {
      const describe = (text: string, through: TestServer) =>
        client(through).put('/publishers/alice-co/nodes/shared', { token: alice.token, body: { description: text } });
      for (let i = 0; i < 2; i++) expect((await api.get('/nodes/shared')).status).toBe(200); // built, then cached
      expect((await describe('written by the other server', other)).status).toBe(200);
      expect((await api.get('/nodes/shared')).body.description).toBe('written by the other server');
      expect((await describe('written here', server)).status).toBe(200);
      expect((await api.get('/nodes/shared')).body.description).toBe('written here');
    } finally {
      await other.close();
    }
  });

  it("answer 503 in the errors' shape while the store is out of reach", async () => {
    counted.state.cut = true;
    try {
      const answer = await raw(['GET /nodes/kept HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n']);
      expect(answer).toMatch(/^HTTP\/1\.1 503 /);
      expect(answer).toMatch(/\r\nretry-after: 5\r\n/i);
      expect(answer).toContain('"error":"unavailable"');
    } finally {
      counted.state.cut = false;
    }
  });
});

describe('reviews', () => {
  const review = (path: string, token: string, extra = '') =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n${extra}\r\n`;
  const last = (path: string, token: string) => review(path, token, 'Connection: close\r\n');

  it('answer the node with its new rating, as a read of it does, and are logged', async () => {
    await publishAndUpload(server, alice.token, 'alice-co', 'rated', '1.0.0');
    const bob = await createUser(server, 'bob-reviews');
    logged.length = 0;
    const answers = await raw([
      review('/nodes/rated/reviews?star=4', bob.token),
      last('/nodes/RaTeD/reviews?star=4', bob.token),
    ]);
    expect(count(answers, 'HTTP/1.1 200 OK'), answers).toBe(2);
    expect(answers).toContain('"rating":4');
    const read = await raw(['GET /nodes/rated HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n']);
    expect(withoutDate(answers).split('\r\n\r\n')[1].split('HTTP/1.1')[0]).toBe(withoutDate(read).split('\r\n\r\n')[1]);
    expect(logged.map((line) => line.replace(/ [\d.]+ms .*$/, ' Nms'))).toEqual([
      'POST /nodes/rated/reviews 200 Nms',
      'POST /nodes/RaTeD/reviews 200 Nms',
      'GET /nodes/rated 200 Nms',
    ]);
    // A second review replaces the first.
    expect((await api.post('/nodes/rated/reviews?star=2', { token: bob.token })).body.rating).toBe(2);
  });

  it("refuse in the errors' shape", async () => {
    const reader = await createUser(server, 'reader-shape');
    expectError(await api.post('/nodes/rated/reviews?star=3'), 401, 'unauthorized');
    expectError(await api.post('/nodes/rated/reviews?star=3', { token: 'nrg_u_unknown' }), 401, 'unauthorized');
    expectError(await api.post('/nodes/missing/reviews?star=3', { token: reader.token }), 404, 'not_found');
    for (const star of ['0', '6', '33', '3.5', '', '03x']) {
      expectError(await api.post(`/nodes/rated/reviews?star=${star}`, { token: reader.token }), 400, 'invalid_request');
    }
    expect((await api.post('/nodes/rated/reviews?star=3', { token: reader.token, body: {} })).status).toBe(200);
    const banned = await api.put('/publishers/alice-co', {
      token: server.adminToken,
      body: { status: 'PublisherStatusBanned' },
    });
    expect(banned.status).toBe(200);
    try {
      expectError(await api.post('/nodes/rated/reviews?star=3', { token: reader.token }), 403, 'banned');
    } finally {
      expect(
        (await api.put('/publishers/alice-co', { token: server.adminToken, body: { status: 'PublisherStatusActive' } }))
          .status,
      ).toBe(200);
    }
  });

  it('with two Authorization headers are read joined and refused (401)', async () => {
    const bob = await createUser(server, 'bob-twice');
    const twice = (token: string) =>
      `POST /nodes/rated/reviews?star=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${bob.token}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`;
    for (const token of [bob.token, 'nrg_u_other']) {
      const answer = await raw([twice(token)]);
      expect(answer.split('\r\n')[0], answer).toBe('HTTP/1.1 401 Unauthorized');
    }
    expect((await api.get('/nodes/rated')).body.rating, 'no review was written').not.toBe(1);
  });

  it('refuse a revoked token at once', async () => {
    const reader = await createUser(server, 'reader-revoked');
    const created = await api.post('/users/me/tokens', { token: reader.token, body: { name: 'phone' } });
    expect(created.status, created.text).toBe(201);
    expect((await api.post('/nodes/rated/reviews?star=5', { token: created.body.token })).status).toBe(200);
    expect((await api.delete(`/users/me/tokens/${created.body.id}`, { token: reader.token })).status).toBe(204);
    expectError(await api.post('/nodes/rated/reviews?star=5', { token: created.body.token }), 401, 'unauthorized');
  });

  it('count against the rate limit of changes', async () => {
    const limited = await startServer({ rateLimit: 2 });
    try {
      const carol = await createUser(limited, 'carol');
      await createPublisher(limited, carol, 'carol-co');
      await publishAndUpload(limited, carol.token, 'carol-co', 'limited', '1.0.0');
      const dave = await createUser(limited, 'dave');
      const answers = [];
      for (let i = 0; i < 3; i++)
        answers.push((await client(limited).post('/nodes/limited/reviews?star=5', { token: dave.token })).status);
      expect(answers).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});
