// Request limits: the JSON body limit (413, announced or streamed), the nesting limit (400), and 408
// for a request whose headers or body arrive too slowly (Node's headersTimeout and requestTimeout,
// answered in our error shape by the clientError handler).
import { randomBytes } from 'node:crypto';
import { createServer, request } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JSON_BODY_MAX, JSON_MAX_DEPTH } from '../../../src/contract/limits.js';
import { JsonShape } from '../../../src/server/json-shape.js';
import { startServer, type TestServer } from '../../helpers.js';
import { call, createPublisher, createUser, expectError, publish, type Reply, type TestUser } from '../fixtures.js';
import { storedZip } from '../child.js';
import { figure } from '../../figures.js';

let server: TestServer;
let owner: TestUser;
let refused = 0;
const logs: string[] = [];

beforeAll(async () => {
  server = await startServer({ headersTimeout: 500, requestTimeout: 1_500, log: (line) => logs.push(line) });
  owner = await createUser(server, 'limits-owner');
  await createPublisher(server, owner, 'limits-co');
  expect((await publish(server, owner.token, 'limits-co', 'limits-node', '1.0.0')).status).toBe(201);
});
afterAll(() => server.close());

/** Writes `head` on a socket, then `drip` every `everyMs` until the server closes; resolves to its answer. */
function slowly(head: string, drip: string, everyMs: number): Promise<string> {
  return new Promise((resolve) => {
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve(answer);
    });
    socket.write(head);
    const timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
  });
}

const errorOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error;

describe('408 for requests sent too slowly', () => {
  it('answers headers that never finish with 408 request_timeout', async () => {
    const answer = await slowly(`GET /nodes HTTP/1.1\r\nHost: x\r\n`, 'X-Drip: 1\r\n', 100);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(errorOf(answer)).toBe('request_timeout');
    refused++;
  });

  it('answers a JSON body trickled past the request timeout with 408, and changes nothing', async () => {
    const body = JSON.stringify({ description: 'slow change' });
    const head =
      `PUT /publishers/limits-co/nodes/limits-node HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${owner.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length + 10_000}\r\n\r\n${body.slice(0, 5)}`;
    const answer = await slowly(head, ' ', 100);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(errorOf(answer)).toBe('request_timeout');
    refused++;
    expect((await call(server.url, 'GET', '/nodes/limits-node')).body.description).toBe('');
  });

  it('serves others while slow requests wait, and logs no internal error for them', async () => {
    const slow = Array.from({ length: 20 }, () => slowly(`GET /nodes HTTP/1.1\r\nHost: x\r\n`, 'X-Drip: 1\r\n', 100));
    for (let i = 0; i < 5; i++) expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);
    for (const answer of await Promise.all(slow)) expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    refused += slow.length;
    expect(logs.filter((line) => /internal error| 5\d\d [\d.]+ms /.test(line))).toEqual([]);
  });
});

describe('a client that closes its side once its request is sent', () => {
  it('still gets its answer, also one that takes a while (an upload checked and stored)', async () => {
    const published = await publish(server, owner.token, 'limits-co', 'half-closed', '1.0.0');
    const zip = await storedZip({ 'data.bin': randomBytes(2 * 1024 * 1024), '__init__.py': 'x = 1\n' });
    const url = new URL(published.body.signedUrl);
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname);
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('error', () => {});
      socket.on('close', () => resolve(text));
      socket.write(
        `PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/zip\r\nContent-Length: ${zip.length}\r\n\r\n`,
      );
      socket.end(zip); // shutdown(SHUT_WR) right after the body
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect((await call(server.url, 'GET', '/nodes/half-closed/versions/1.0.0')).body.archive_size).toBe(zip.length);
  });
});

describe('the JSON body limit', () => {
  it(`answers a body announced over ${JSON_BODY_MAX} bytes with 413 before reading it`, async () => {
    const head =
      `POST /publishers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${owner.token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${JSON_BODY_MAX + 1}\r\n\r\n{`;
    const answer = await slowly(head, '', 60_000);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(errorOf(answer)).toBe('payload_too_large');
    refused++;
  });

  it('answers a streamed body that grows past the limit with 413', async () => {
    const reply = await new Promise<Reply>((resolve, reject) => {
      const url = new URL(`${server.url}/publishers`);
      const req = request(
        url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${owner.token}`,
            'content-type': 'application/json',
            'transfer-encoding': 'chunked',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () =>
            resolve({ status: res.statusCode!, headers: new Headers(), body: JSON.parse(text), text }),
          );
        },
      );
      req.on('error', reject);
      const chunk = Buffer.alloc(1024 * 1024, 'a');
      req.write('{"id":"x","name":"');
      let sent = 0;
      const more = () => {
        while (sent <= JSON_BODY_MAX) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', more);
        }
        req.end('"}');
      };
      more();
    });
    expectError(reply, 413, 'payload_too_large');
    refused++;
  });
});

describe('the nesting limit', () => {
  const nested = (depth: number) => '{"a":'.repeat(depth - 2) + '1' + '}'.repeat(depth - 2);
  const update = (translationsDepth: number) =>
    call(server.url, 'PUT', '/publishers/limits-co/nodes/limits-node', {
      token: owner.token,
      raw: `{"translations":${nested(translationsDepth)}}`,
      headers: { 'content-type': 'application/json' },
    });

  it('counts depth outside strings only, across chunks', () => {
    const refused = (...chunks: string[]) => {
      const shape = new JsonShape();
      return chunks.some((chunk) => shape.feed(Buffer.from(chunk)) !== undefined);
    };
    const deep = '['.repeat(JSON_MAX_DEPTH);
    expect(refused(deep)).toBe(false);
    expect(refused(deep, '[')).toBe(true);
    expect(refused(`{"a":"${'['.repeat(1000)}"}`)).toBe(false);
    expect(refused('"\\"', `${'['.repeat(1000)}"`)).toBe(false); // an escaped quote split from what follows
    expect(refused('"\\', `"${'['.repeat(1000)}"`)).toBe(false); // an escape split across chunks
    expect(refused('"\\\\"', deep, '[')).toBe(true); // an escaped backslash ends nothing: the string closes
  });

  it('searches each byte of a chunk a bounded number of times, also in a string of many escapes', () => {
    // It follows every body on the event loop: a search for the closing quote from each plain byte
    // between escapes scanned ~n²/6 bytes of a chunk of n (100 ms a MiB of `\\na`, 2.4 s for 25 MiB).
    let scanned = 0;
    const indexOf = Buffer.prototype.indexOf;
    const search = vi.spyOn(Buffer.prototype, 'indexOf').mockImplementation(function (
      this: Buffer,
      value,
      from,
      encoding,
    ) {
      const at = indexOf.call(this, value, from, encoding);
      scanned += (at < 0 ? this.length : at + 1) - Number(from ?? 0);
      return at;
    });
    try {
      for (const unit of ['\\na', 'a\\"', 'ab', '\\\\']) {
        scanned = 0;
        const chunk = Buffer.from(`{"a":"${unit.repeat((64 * 1024) / unit.length)}"}`);
        expect(new JsonShape().feed(chunk), unit).toBeUndefined();
        expect(scanned, unit).toBeLessThan(3 * chunk.length);
      }
    } finally {
      search.mockRestore();
    }
  });

  it(`takes a body ${JSON_MAX_DEPTH} levels deep, and answers one level more, or 100,000, with 400 (never a 500)`, async () => {
    // the body itself is one level, translations one more: nested(n) adds n - 2
    expect((await update(JSON_MAX_DEPTH)).status).toBe(200);
    for (const depth of [JSON_MAX_DEPTH + 1, 5_000, 100_000]) {
      const reply = await update(depth + 1);
      expectError(reply, 400, 'invalid_request');
      expect(reply.body.message).toMatch(/nests deeper/);
      refused++;
    }
    expect(logs.filter((line) => /internal error| 5\d\d [\d.]+ms /.test(line))).toEqual([]);
  });
});

describe('callbacks outside --callback-allow', () => {
  const IMAGE = 'https://127.0.0.1/image.png';

  it('are refused at submission (400 naming the field); loopback, the default, is accepted and called back', {
    timeout: 30_000,
  }, async () => {
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push(body);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const proxied = await startServer({ proxy: { sandboxDelay: 100 } });
    const narrow = await startServer({ proxy: { sandboxDelay: 100, callbackAllow: ['hooks.example.test'] } });
    try {
      const user = await createUser(proxied, 'proxy-user');
      const narrowUser = await createUser(narrow, 'narrow-user');
      const submissions: [TestServer, string, string, Record<string, unknown>, string][] = [
        [
          proxied,
          user.token,
          '/proxy/img/v1/ai/image-relight',
          { image: IMAGE, webhook_url: 'http://192.0.2.1/hook' },
          'webhook_url',
        ],
        [
          proxied,
          user.token,
          '/proxy/img/v1/ai/image-relight',
          { image: IMAGE, webhook_url: 'https://hooks.example.test/hook' },
          'webhook_url',
        ],
        [
          proxied,
          user.token,
          '/proxy/img/v1/ai/skin-enhancer/flexible',
          { image: IMAGE, webhook_url: 'http://10.1.2.3/hook' },
          'webhook_url',
        ],
        [
          proxied,
          user.token,
          '/proxy/vid/extend',
          { model: 'vidq2-turbo', callback_url: 'http://[2001:db8::1]/cb' },
          'callback_url',
        ],
        [
          proxied,
          user.token,
          '/proxy/vid/extend',
          { model: 'vidq2-turbo', callback_url: 'http://127.0.0.1.example.test/cb' },
          'callback_url',
        ],
        // a registry that allows one host refuses loopback too
        [
          narrow,
          narrowUser.token,
          '/proxy/img/v1/ai/image-relight',
          { image: IMAGE, webhook_url: hook },
          'webhook_url',
        ],
      ];
      for (const [target, token, path, body, field] of submissions) {
        const reply = await call(target.url, 'POST', path, { token, body });
        expectError(reply, 400, 'invalid_request');
        expect(reply.body.details).toContainEqual({ path: field, message: expect.stringMatching(/not allowed/) });
        refused++;
      }
      const accepted = await call(proxied.url, 'POST', '/proxy/img/v1/ai/image-relight', {
        token: user.token,
        body: { image: IMAGE, webhook_url: hook },
      });
      expect(accepted.status, accepted.text).toBe(200);
      for (let i = 0; i < 100 && !received.some((body) => body.includes('COMPLETED')); i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(received.some((body) => body.includes(accepted.body.data.task_id))).toBe(true);
    } finally {
      await proxied.close();
      await narrow.close();
      receiver.close();
    }
    figure(
      'limits.requests_refused',
      refused,
      '408 slow headers and bodies, 413 bodies over 25 MiB, 400 JSON nested too deep, 400 callbacks outside --callback-allow',
    );
  });
});
