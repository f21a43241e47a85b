// The client over node:http against stand-in HTTP servers on 127.0.0.1: retries, Retry-After,
// timeouts, error bodies, redirects and where the token goes. The registry itself is exercised by
// the e2e tests; these answers (503, a stalled server, a reset) are ones it does not give on purpose.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import {
  ApiError,
  ForeignAnswerError,
  NetworkError,
  createClient,
  retryAfterMs,
  routes,
  type UploadInput,
} from '../../src/client/index.js';

const { createPublisher, getNode, health, publishVersion } = routes;

type Handler = (req: IncomingMessage, res: ServerResponse, count: number) => void;

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done).closeAllConnections())));
});

/** A stand-in server; `seen` records each request's method, path and authorization header. */
async function stand(handler: Handler) {
  const seen: { method?: string; url?: string; authorization?: string }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
    handler(req, res, seen.length);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

describe('client over node:http', () => {
  it('retries a GET on 503 and 429 (waiting as Retry-After says), logging each try without the token', async () => {
    const { url, seen } = await stand((_req, res, n) => {
      if (n === 1) return json(res, 503, { error: 'internal', message: 'busy' });
      if (n === 2) return json(res, 429, { error: 'rate_limited', message: 'slow down' }, { 'retry-after': '0' });
      json(res, 200, { ok: true });
    });
    const lines: string[] = [];
    const client = createClient({ baseUrl: url, token: 'nrg_u_secret', log: (line) => lines.push(line) });
    expect(await client.call(health)).toEqual({ ok: true });
    expect(seen.map((s) => s.authorization)).toEqual([
      'Bearer nrg_u_secret',
      'Bearer nrg_u_secret',
      'Bearer nrg_u_secret',
    ]);
    expect(lines).toEqual([
      `→ GET ${url}/healthz`,
      `← 503 GET ${url}/healthz`,
      `↻ retry 1: GET ${url}/healthz`,
      `→ GET ${url}/healthz`,
      `← 429 GET ${url}/healthz`,
      `↻ retry 2: GET ${url}/healthz`,
      `→ GET ${url}/healthz`,
      `← 200 GET ${url}/healthz`,
    ]);
    expect(lines.join('\n')).not.toContain('secret');
  });

  it('gives up after the retries allowed (no restart window), with the last error as an ApiError', async () => {
    const { url, seen } = await stand((_req, res) =>
      json(res, 502, { error: 'upstream_error', message: 'down', hint: 'later' }),
    );
    const error = await createClient({ baseUrl: url, retries: 1, restartWindowMs: 0 })
      .call(health)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 502, code: 'upstream_error', message: 'down', hint: 'later' });
    expect(seen).toHaveLength(2);
  });

  it('a restarting registry (502 twice) is waited for past the retries, within the restart window; then given up', async () => {
    // counted, not timed: with one retry allowed, the second 502 is waited out by the window alone, however loaded the machine
    const { url, seen } = await stand((_req, res, n) =>
      n <= 2 ? json(res, 502, { error: 'upstream_error', message: 'restarting' }) : json(res, 200, { ok: true }),
    );
    expect(await createClient({ baseUrl: url, retries: 1, restartWindowMs: 10_000 }).call(health)).toEqual({
      ok: true,
    });
    expect(seen).toHaveLength(3);
    const down = await stand((_req, res) => json(res, 503, { error: 'unavailable', message: 'restarting' }));
    const error = await createClient({ baseUrl: down.url, retries: 1, restartWindowMs: 1_500 })
      .call(health)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503 });
    expect(down.seen.length).toBeGreaterThan(2);
  });

  it('a refused connection: retried within the restart window once the registry has answered, only `retries` times before (a wrong URL)', async () => {
    const lines: string[] = [];
    const server = http.createServer((_req, res) => json(res, 200, { ok: true }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const restart = () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections());

    // never answered: `retries` (2) and no more, even with a long window
    await restart();
    const typo = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      retries: 2,
      restartWindowMs: 60_000,
      log: (line) => lines.push(line),
    });
    const refused = await typo.call(health).catch((e: unknown) => e);
    expect((refused as NetworkError).reason).toMatch(/^ECONNREFUSED \(3 tries in \d+\.\d s\)$/);
    expect(lines.filter((line) => line.startsWith('↻'))).toHaveLength(2);

    // answered once, then down for 1.5 s: waited for
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, retries: 2, restartWindowMs: 10_000 });
    expect(await client.call(health)).toEqual({ ok: true });
    await restart();
    setTimeout(() => server.listen(port, '127.0.0.1'), 1_500);
    expect(await client.call(health)).toEqual({ ok: true });
    await restart();
  });

  it('a window the user chose (--retry-window) bounds every retry, 0 none, whatever `retries` says', async () => {
    const busy = await stand((_req, res) => json(res, 503, { error: 'unavailable', message: 'restarting' }));
    const error = await createClient({ baseUrl: busy.url, retries: 2, restartWindowMs: 0, windowChosen: true })
      .call(health)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503 });
    expect(busy.seen).toHaveLength(1);
    const limited = await stand((_req, res) =>
      json(res, 429, { error: 'rate_limited', message: 'slow down' }, { 'retry-after': '0' }),
    );
    await expect(
      createClient({ baseUrl: limited.url, retries: 2, restartWindowMs: 0, windowChosen: true }).call(health),
    ).rejects.toMatchObject({ status: 429 });
    expect(limited.seen).toHaveLength(1);
    // within a window of 0.5 s, one retry (after 0.3 s) fits, not the second (0.6 s more)
    const down = await stand((_req, res) => json(res, 502, { error: 'upstream_error', message: 'restarting' }));
    await expect(
      createClient({ baseUrl: down.url, retries: 2, restartWindowMs: 500, windowChosen: true }).call(health),
    ).rejects.toMatchObject({ status: 502 });
    expect(down.seen).toHaveLength(2);
    const cut = await stand((req) => req.socket.destroy());
    const upload = createClient({ baseUrl: cut.url, restartWindowMs: 0, windowChosen: true }).upload(
      `${cut.url}/uploads/v1?sig=x`,
      { open: () => Readable.from([Buffer.alloc(10)]), size: 10, sha256: '0'.repeat(64) },
    );
    await expect(upload).rejects.toBeInstanceOf(NetworkError);
    expect(cut.seen).toHaveLength(1);
  });

  it('connections reset before the registry has answered: the short retries with the default window, waited for within a chosen one', async () => {
    const { url, seen } = await stand((_req, res) => json(res, 200, { ok: true }));
    const server = servers.at(-1)!;
    let resets = 0;
    // the first 4 connections are reset (RST) before a byte is read, as by a registry still starting behind a
    // balancer: three tries of the first client; the second, allowed no retries, tries again within its window
    server.prependListener('connection', (socket: Socket) => void (++resets <= 4 && socket.resetAndDestroy()));
    const error = await createClient({ baseUrl: url, retries: 2 })
      .call(health)
      .catch((e: unknown) => e);
    expect((error as NetworkError).reason).toMatch(/^ECONNRESET \(3 tries in \d+\.\d s\)$/);
    expect(
      await createClient({ baseUrl: url, retries: 0, restartWindowMs: 10_000, windowChosen: true }).call(health),
    ).toEqual({ ok: true });
    expect([resets, seen.length]).toEqual([5, 1]);
  });

  it('never retries a POST (unless the server refused it with Retry-After), nor a 500 or 4xx', async () => {
    const post = await stand((_req, res) => json(res, 503, { error: 'internal', message: 'busy' }));
    const body = { node_version: { version: '1.0.0' } };
    const error = await createClient({ baseUrl: post.url })
      .call(publishVersion, { params: { publisherId: 'acme', nodeId: 'n' }, body })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503 });
    expect(post.seen).toHaveLength(1);
    // a 503 or 429 with Retry-After says the request was not done: the publish goes again, as asked
    const asked = await stand((_req, res, n) =>
      n === 1
        ? json(res, 503, { error: 'unavailable', message: 'busy' }, { 'retry-after': '0' })
        : n === 2
          ? json(res, 429, { error: 'rate_limited', message: 'slow down' }, { 'retry-after': '0' })
          : json(res, 201, { node_version: { id: 'v', version: '1.0.0' }, signedUrl: 'http://127.0.0.1:9/u' }),
    );
    const created = await createClient({ baseUrl: asked.url }).call(publishVersion, {
      params: { publisherId: 'acme', nodeId: 'n' },
      body,
    });
    expect(created).toMatchObject({ signedUrl: 'http://127.0.0.1:9/u' });
    expect(asked.seen.map((s) => s.method)).toEqual(['POST', 'POST', 'POST']);
    // any other POST is sent once: its 503 may come after work was done (an AI provider called, the task not stored)
    const once = await stand((_req, res) =>
      json(res, 503, { error: 'unavailable', message: 'no database' }, { 'retry-after': '0' }),
    );
    const refused = await createClient({ baseUrl: once.url })
      .call(createPublisher, { body: { id: 'acme' } })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 503 });
    expect(once.seen).toHaveLength(1);

    const failing = await stand((_req, res, n) =>
      n === 1
        ? json(res, 500, { error: 'internal', message: 'bug' })
        : json(res, 404, { error: 'not_found', message: 'no' }),
    );
    const client = createClient({ baseUrl: failing.url });
    await expect(client.call(health)).rejects.toMatchObject({ status: 500, code: 'internal' });
    await expect(client.call(getNode, { params: { nodeId: 'x' } })).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
    expect(failing.seen).toHaveLength(2);
  });

  it('an answer that is not our error shape still becomes an ApiError with the status and its text', async () => {
    const { url } = await stand((_req, res) => {
      res.writeHead(418, { 'content-type': 'text/plain' });
      res.end('short and stout');
    });
    await expect(createClient({ baseUrl: url }).call(health)).rejects.toMatchObject({
      status: 418,
      message: 'short and stout',
    });
  });

  it('an HTML error page (a proxy or a web server answered) is named by its title; 502–504: the registry or its proxy is down, else: check the URL', async () => {
    const { url } = await stand((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(
        '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title><style>body{font:14px sans-serif}</style></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>',
      );
    });
    // (no retries and restartWindowMs 0: the 502 is not waited out, the retries of a restart are tested above)
    const error = await createClient({ baseUrl: url, retries: 0, restartWindowMs: 0 })
      .call(publishVersion, {
        params: { publisherId: 'p', nodeId: 'n' },
        body: { node: { id: 'n' }, node_version: { version: '1.0.0' } },
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 502,
      message: 'HTTP 502 Bad Gateway: an HTML page titled "502 Bad Gateway", not a registry\'s answer',
    });
    expect((error as ApiError).hint).toBe(
      'the registry, or a proxy in front of it, is unavailable (it may be restarting): try again later',
    );
    const { url: elsewhere } = await stand((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<html><head><title>Not Found</title></head></html>');
    });
    // a 404 page from a registry URL: not a registry at all (a registry's own 404 is JSON)
    const notFound = await createClient({ baseUrl: elsewhere })
      .call(health)
      .catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(ForeignAnswerError);
    expect((notFound as Error).message).toBe(
      `${elsewhere} does not answer as a nodereg or Comfy registry: ${elsewhere}/healthz answered HTTP 404 with an HTML page titled "Not Found"`,
    );
    // any other status: an ApiError whose hint says to check the URL
    const { url: teapot } = await stand((_req, res) =>
      res.writeHead(418, { 'content-type': 'text/html' }).end('<html><title>Nope</title></html>'),
    );
    const other = await createClient({ baseUrl: teapot })
      .call(health)
      .catch((e: unknown) => e);
    expect((other as ApiError).hint).toMatch(/check the registry URL/);
  });

  it('a Retry-After longer than the timeout is not waited for: the 429 comes back at once, carrying it', async () => {
    const { url, seen } = await stand((_req, res) =>
      json(res, 429, { error: 'rate_limited', message: 'slow down' }, { 'retry-after': '120' }),
    );
    const error = await createClient({ baseUrl: url, timeoutMs: 5_000 })
      .call(health)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, retryAfter: '120' });
    expect(seen).toHaveLength(1);
  });

  it('a server that does not answer in time is a NetworkError, not retried', async () => {
    const { url, seen } = await stand(() => {}); // never answers
    const started = Date.now();
    const error = await createClient({ baseUrl: url, timeoutMs: 300 })
      .call(health)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).reason).toBe('no answer in time');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(seen).toHaveLength(1);
  });

  it('a connection reset is retried', async () => {
    const { url, seen } = await stand((req, res, n) => (n === 1 ? req.socket.destroy() : json(res, 200, { ok: true })));
    expect(await createClient({ baseUrl: url }).call(health)).toEqual({ ok: true });
    expect(seen).toHaveLength(2);
  });

  it('a download follows a redirect to another origin without the token, and streams the body', async () => {
    const mirror = await stand((_req, res) => res.end('zip bytes'));
    const mirrorUrl = mirror.url.replace('127.0.0.1', 'localhost'); // the same host by another name: another origin
    const registry = await stand((req, res) => {
      if (req.url === '/archives/a.zip') {
        res.writeHead(302, { location: `${mirrorUrl}/a.zip` });
        return res.end();
      }
      res.end('own bytes');
    });
    const client = createClient({ baseUrl: registry.url, token: 'nrg_u_secret' });
    const answer = await client.download(`${registry.url}/archives/a.zip`);
    expect(answer.status).toBe(200);
    const chunks: Buffer[] = [];
    for await (const chunk of answer.body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('zip bytes');
    expect(registry.seen[0].authorization).toBe('Bearer nrg_u_secret');
    expect(mirror.seen).toEqual([{ method: 'GET', url: '/a.zip', authorization: undefined }]);
  });
});

describe('the archive upload over node:http', () => {
  const bytes = (size: number) => Buffer.alloc(size, 1);
  const upload = (url: string, body: Buffer, options: Partial<UploadInput> = {}) =>
    createClient({ baseUrl: url }).upload(`${url}/uploads/v1?sig=x`, {
      open: () => Readable.from([body]),
      size: body.length,
      sha256: '0'.repeat(64),
      backoffMs: () => 0,
      ...options,
    });

  it('gives up when no answer comes after the last byte, without retrying (the registry may still be checking it)', async () => {
    const { url, seen } = await stand((req) => req.resume()); // reads the whole body, never answers
    const error = await upload(url, bytes(1000), { attempts: 2, answerMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).reason).toBe('no answer 0.3 s after the upload');
    expect(seen).toHaveLength(1);
  });

  it('gives up on an attempt whose body stops moving (the other side reads nothing), and retries it', async () => {
    const { url, seen } = await stand((req) => req.socket.pause()); // takes the headers, then stops reading
    const error = await upload(url, bytes(32 * 1024 * 1024), { attempts: 2, idleMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).reason).toMatch(
      /^the upload stalled: nothing sent for 0\.3 s \(2 tries in \d+\.\d s\)$/,
    );
    expect(seen).toHaveLength(2); // retried, reading the archive again
  });

  it('waits as Retry-After says before trying again after a 429', async () => {
    const arrived: number[] = [];
    const { url } = await stand((req, res, n) => {
      arrived.push(Date.now());
      req.resume();
      req.on('end', () =>
        n === 1
          ? json(res, 429, { error: 'rate_limited', message: 'slow down' }, { 'retry-after': '1' })
          : json(res, 400, { error: 'invalid_request', message: 'no' }),
      );
    });
    const error = await upload(url, bytes(1000), { attempts: 2 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400 });
    expect(arrived).toHaveLength(2);
    expect(arrived[1] - arrived[0]).toBeGreaterThanOrEqual(950); // the backoff given is 0: only Retry-After waits
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-25T12:00:00Z');
    expect(retryAfterMs('7', now)).toBe(7_000);
    expect(retryAfterMs('Wed, 25 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Wed, 25 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});
