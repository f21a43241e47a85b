// The error shape everywhere: unknown routes, malformed JSON, wrong media types, and what Node's
// HTTP parser rejects before hono sees the request. Plus the meta routes.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../../src/contract/error-body.js';
import { startServer, type TestServer } from '../../helpers.js';
import { client, createUser, expectError, type TestUser } from '../fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let alice: TestUser;

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  alice = await createUser(server, 'alice');
});
afterAll(() => server.close());

/** Sends raw bytes and returns everything the server answers before closing. */
function rawRequest(bytes: string, url = server.url): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer')));
  });
}

const jsonOf = (answer: string) => ErrorBody.parse(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)));

describe('error shape', () => {
  it('answers unknown routes and unknown methods with 404 not_found', async () => {
    expectError(await api.get('/no/such/route'), 404, 'not_found');
    expectError(await api.delete('/nodes'), 404, 'not_found');
    expectError(await api.put('/healthz', { body: {} }), 404, 'not_found');
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    for (const raw of ['{', 'nul', '{"name": }', '\u0000']) {
      const reply = await api.post('/users/me/tokens', {
        token: alice.token,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expectError(reply, 400, 'invalid_request');
    }
  });

  it('answers a JSON body of the wrong shape with details naming the field', async () => {
    const reply = await api.post('/publishers', { token: alice.token, body: ['not', 'an', 'object'] });
    expectError(reply, 400, 'invalid_request');
    expect(reply.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.any(String) })]));
  });

  it('answers 415 for a body that is not JSON, before authentication', async () => {
    expectError(
      await api.post('/publishers', { raw: 'id=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
  });

  it("answers what Node's HTTP parser rejects in the error shape, and keeps serving", async () => {
    const garbage = await rawRequest('THIS IS NOT HTTP\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 /);
    expect(jsonOf(garbage).error).toBe('invalid_request');

    const badHeader = await rawRequest('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n');
    expect(badHeader).toMatch(/^HTTP\/1\.1 400 /);
    expect(jsonOf(badHeader).error).toBe('invalid_request');

    const hugeHeader = await rawRequest(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`);
    expect(hugeHeader).toMatch(/^HTTP\/1\.1 431 /);
    expect(jsonOf(hugeHeader).error).toBe('payload_too_large');

    // Node answers an Expect other than 100-continue itself, with an empty 417 (found by the soak)
    const expectation = await rawRequest(
      'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\nConnection: close\r\n\r\n',
    );
    expect(expectation).toMatch(/^HTTP\/1\.1 417 /);
    expect(jsonOf(expectation)).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('Expect') });

    expect((await api.get('/healthz')).status).toBe(200);
  });

  it("logs one access line for each request Node's HTTP parser refuses, as for every other request", async () => {
    const lines: string[] = [];
    const logged = await startServer({ accessLog: (line) => lines.push(line) });
    try {
      expect(await rawRequest('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', logged.url)).toMatch(
        /^HTTP\/1\.1 400 /,
      );
      expect(
        await rawRequest(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`, logged.url),
      ).toMatch(/^HTTP\/1\.1 431 /);
      expect(lines).toEqual([
        'malformed HTTP request (HPE_INVALID_HEADER_TOKEN): answered 400',
        'the request headers are too large (HPE_HEADER_OVERFLOW): answered 431',
      ]);
    } finally {
      await logged.close();
    }
  });

  it('never answers a stack trace or a token', async () => {
    const reply = await api.post('/users', { token: server.adminToken, body: { name: 5 } });
    expectError(reply, 400, 'invalid_request');
    expect(reply.text).not.toMatch(/at .*\.(ts|js):\d+/);
    expect(reply.text).not.toContain(server.adminToken);
  });
});

describe('meta routes', () => {
  it('answers /healthz and /openapi.json', async () => {
    expect((await api.get('/healthz')).body).toMatchObject({ ok: true });
    const openapi = await api.get('/openapi.json');
    expect(openapi.status).toBe(200);
    expect(openapi.body.paths['/publishers/{publisherId}/nodes/{nodeId}/versions']).toBeDefined();
  });
});
