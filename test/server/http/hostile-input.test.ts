// Hostile input against a registry in its own process: each attack that once crashed, froze or bloated
// it, sent as it was found (or scaled, with the same shape). Every answer must be a small 4xx in the
// error shape; the process must stay alive, keep its descriptors and memory, and keep answering
// /healthz meanwhile (RELIABILITY.md, "Bounded work per request").
import { fork } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../../src/contract/error-body.js';
import { MAX_FIELD_ERRORS, METADATA_BODY_MAX, TAGS, URL_MAX } from '../../../src/contract/limits.js';
import { PIPELINED_MAX } from '../../../src/shared/tuning.js';
import { tempDir, type TestServer } from '../../helpers.js';
import { call, createPublisher, createUser, publish, uploadTo, type TestUser } from '../fixtures.js';
import { startChild, storedZip, type ChildServer } from '../child.js';
import { figure, figureLoad, latency } from '../../figures.js';

const MiB = 1024 * 1024;
/** An error answer is at most this long, whatever was sent. */
const SMALL = 8 * 1024;

let child: ChildServer;
let server: TestServer;
let owner: TestUser;
let archivePath = '';
let resultPath = '';

beforeAll(async () => {
  child = await startChild(tempDir('nodereg-hostile-'), { options: { log: true, proxy: { sandboxDelay: 0 } } });
  server = { url: child.url, adminToken: child.adminToken } as TestServer;
  owner = await createUser(server, 'hostile-owner');
  await createPublisher(server, owner, 'hostile-co');
  const published = await publish(server, owner.token, 'hostile-co', 'hostile-node', '1.0.0');
  // big enough that a download is still being sent when a client goes away
  const uploaded = await uploadTo(
    published.body.signedUrl,
    await storedZip({ '__init__.py': 'x = 1\n', 'data.bin': Buffer.alloc(2 * MiB, 7) }),
  );
  expect(uploaded.status, uploaded.text).toBe(200);
  archivePath = new URL(uploaded.body.downloadUrl).pathname;
  const png = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000a49444154789c6300010000050001',
    'hex',
  );
  const task = await call(server.url, 'POST', '/proxy/img/v1/ai/image-relight', {
    token: owner.token,
    body: { image: png.toString('base64') },
  });
  expect(task.status, task.text).toBe(200);
  for (let i = 0; i < 100 && !resultPath; i++) {
    const status = await call(server.url, 'GET', `/proxy/img/v1/ai/image-relight/${task.body.data.task_id}`, {
      token: owner.token,
    });
    if (status.body.data.generated.length) resultPath = new URL(status.body.data.generated[0]).pathname;
    else await new Promise((r) => setTimeout(r, 50));
  }
  expect(resultPath).toMatch(/^\/proxy\/results\//);
}, 60_000);

afterAll(async () => {
  await child?.close();
});

interface Answer {
  status: number;
  text: string;
  ms: number;
}

/**
 * Sends one request; the body with its Content-Length, or chunked (no length: the server learns the
 * size only by reading). Resolves with the answer even when the server answers before the body is
 * sent and closes the connection.
 */
function send(
  method: string,
  path: string,
  options: { token?: string; body?: Buffer; chunked?: boolean; agent?: Agent } = {},
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const url = new URL(path, server.url);
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body) {
      headers['content-type'] = 'application/json';
      if (options.chunked) headers['transfer-encoding'] = 'chunked';
      else headers['content-length'] = String(options.body.length);
    }
    let answered = false;
    const req = request(url, { method, headers, agent: options.agent ?? false }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, text, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    // One write: the client's loop stays free to read an answer that comes before the body is sent.
    req.end(options.body);
  });
}

/** Asserts a small answer in the error shape with this status (and code, when given). */
function expectSmallError(answer: Answer, status: number, code?: string): ReturnType<typeof ErrorBody.parse> {
  expect(answer.status, answer.text.slice(0, 300)).toBe(status);
  expect(answer.text.length, 'the answer is small').toBeLessThan(SMALL);
  const body = ErrorBody.parse(JSON.parse(answer.text));
  if (code) expect(body.error).toBe(code);
  return body;
}

/** Builds a body once: tests that send it again (and the prober beside them) do not wait for it. */
function once(make: () => Buffer): () => Buffer {
  let made: Buffer | undefined;
  return () => (made ??= make());
}

/** `{"<key>":[<item>,<item>,…]}` of about `bytes` bytes. */
const arrayBody = (key: string, item: string, bytes: number) =>
  once(() => {
    const count = Math.floor((bytes - key.length - 8) / (item.length + 1));
    return Buffer.from(`{"${key}":[${Array(count).fill(item).join(',')}]}`);
  });
const jsonOf = (value: () => unknown) => once(() => Buffer.from(JSON.stringify(value())));

const nodePath = '/publishers/hostile-co/nodes/hostile-node';
const publishPath = `${nodePath}/versions`;
const relightPath = '/proxy/img/v1/ai/image-relight';

/** The hostile requests of the issue, each as it was found: sent by the memory and event-loop tests too. */
const tags100k = arrayBody('tags', '0', 195 * 1024);
const tags12M = arrayBody('tags', '0', 23_000_000);
const objects25MiB = arrayBody('x', '{}', 25 * MiB);
const prompt = jsonOf(() => ({ image: 'https://127.0.0.1/a.png', prompt: '('.repeat(1_300_000) }));
const banner = jsonOf(() => ({ banner_url: `https://x.test/${'b'.repeat(24 * MiB)}` }));
const webhook = jsonOf(() => ({ image: 'https://127.0.0.1/a.png', webhook_url: `http://${'a'.repeat(100_000)} ` }));
let manyEntries: Buffer | undefined;
let uploads = 0;
const attacks: { name: string; send: () => Promise<Answer>; status: number }[] = [
  // 2. errors that amplified memory: 100k tags gave a 13.6 MiB error, 1M a 500, 12M an OOM
  {
    name: '100,000 tags (195 KiB)',
    send: () => send('PUT', nodePath, { token: owner.token, body: tags100k() }),
    status: 413,
  },
  {
    name: '12M tags (23 MB), chunked',
    send: () => send('PUT', nodePath, { token: owner.token, body: tags12M(), chunked: true }),
    status: 413,
  },
  // 3. an unauthenticated 25 MiB publish body was parsed whole for its token: a 5 s freeze
  {
    name: 'a 25 MiB publish body without a token',
    send: () => send('POST', publishPath, { body: objects25MiB() }),
    status: 413,
  },
  {
    name: 'a 25 MiB publish body without a token, chunked',
    send: () => send('POST', publishPath, { body: objects25MiB(), chunked: true }),
    status: 413,
  },
  {
    name: 'a 25 MiB body of {} to the proxy, with a token',
    send: () => send('POST', relightPath, { token: owner.token, body: objects25MiB() }),
    status: 413,
  },
  // 4. the quadratic prompt check: 1.3 million "(" held the server 12 s
  {
    name: 'a relight prompt of 1.3 million "("',
    send: () => send('POST', relightPath, { token: owner.token, body: prompt() }),
    status: 400,
  },
  // 6. unbounded fields: a 24 MiB banner_url
  {
    name: 'a 24 MiB banner_url',
    send: () => send('PUT', nodePath, { token: owner.token, body: banner() }),
    status: 413,
  },
  // the URL check backtracked: 17 s for a webhook_url of 100,000 characters ending in a space
  {
    name: 'a webhook_url of 100,000 characters ending in a space',
    send: () => send('POST', relightPath, { token: owner.token, body: webhook() }),
    status: 400,
  },
  // an archive of many entries is checked entry by entry, off the event loop's critical path
  {
    name: 'an archive of 5,000 empty entries',
    send: async () => {
      manyEntries ??= await storedZip(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`e/${i}.py`, ''])));
      const made = await publish(server, owner.token, 'hostile-co', 'many-entries', `1.0.${uploads++}`);
      const uploaded = await uploadTo(made.body.signedUrl, manyEntries);
      return { status: uploaded.status, text: uploaded.text, ms: 0 };
    },
    status: 200,
  },
  // the OpenAPI document was built for each request (~8 ms of CPU): eight clients fetching it without a
  // token held /healthz at a p99 of 240 ms
  {
    name: '400 GETs of /openapi.json, 8 at a time',
    send: async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 8 });
      let last: Answer | undefined;
      for (let i = 0; i < 50; i++)
        [last] = await Promise.all(Array.from({ length: 8 }, () => send('GET', '/openapi.json', { agent })));
      agent.destroy();
      return last!;
    },
    status: 200,
  },
  // 1. HEADs that leaked a descriptor each, eight at a time as a client's connection pool sends them
  {
    name: '1,000 HEADs on an archive',
    send: async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 8 });
      let last: Answer | undefined;
      for (let i = 0; i < 125; i++)
        [last] = await Promise.all(Array.from({ length: 8 }, () => send('HEAD', archivePath, { agent })));
      agent.destroy();
      return last!;
    },
    status: 200,
  },
];

// First, before any other test raises the peak it measures.
describe('memory', () => {
  it('peaks under 48 MiB over its RSS for each 25 MiB hostile JSON body, each answered with a small 4xx, and keeps none of it', {
    timeout: 120_000,
  }, async () => {
    for (const make of [tags100k, tags12M, objects25MiB, prompt, banner, webhook]) make();
    // The first AI body over 256 KiB starts the thread that prepares such bodies, kept for the process's
    // life: a fixed ~25 MiB that any large submission costs once (it made the whole run's bound fail in
    // CI), not a cost of hostile input. It is started before the measure.
    expectSmallError(await attacks.find((a) => a.name.startsWith('a relight prompt'))!.send(), 400);
    // Each request on its own, after a collection: dropped bytes are freed only when V8 next collects,
    // so a run of requests without one peaks at what they left together (20-47 MiB), not at what one
    // request costs (12-22 MiB measured, each).
    const first = await child.memory();
    let before = first;
    const peaks: string[] = [];
    let worst = 0;
    for (const attack of attacks.filter((a) => a.status !== 200)) {
      expectSmallError(await attack.send(), attack.status);
      const after = await child.memory();
      const growth = after.peak - before.rss;
      peaks.push(`${attack.name}: ${(growth / MiB).toFixed(1)}`);
      worst = Math.max(worst, growth);
      expect(growth, attack.name).toBeLessThan(48 * MiB);
      before = after;
    }
    // What JavaScript still holds (heap and Buffers): the RSS after a collection was 0 or 17-21 MiB over
    // its start in runs alike, as malloc keeps freed memory or not; this was -5 MiB in every run, and
    // +15 MiB with a 20 MiB Buffer kept on purpose.
    const kept = before.held - first.held;
    figure(
      'hostile.peak_rss_growth_mib',
      (worst / MiB).toFixed(1),
      `per request, MiB: ${peaks.join('; ')}; kept ${(kept / MiB).toFixed(1)} MiB (RSS ${((before.rss - first.rss) / MiB).toFixed(1)} MiB)`,
    );
    expect(kept, 'heap and Buffers after a collection, once all were answered').toBeLessThan(8 * MiB);
  });
});

describe('bounded work per request', () => {
  for (const attack of attacks.filter((a) => a.status !== 200)) {
    it(`answers ${attack.name} with a small ${attack.status}`, { timeout: 30_000 }, async () => {
      expectSmallError(await attack.send(), attack.status);
      expect(child.alive()).toBe(true);
    });
  }

  it("refuses a body over its operation's limit before reading it: 1 MiB for metadata, also when announced with a bad token", async () => {
    const over = Buffer.from(JSON.stringify({ description: 'd'.repeat(METADATA_BODY_MAX) }));
    expectSmallError(await send('PUT', nodePath, { token: owner.token, body: over }), 413, 'payload_too_large');
    expectSmallError(
      await send('PUT', nodePath, { token: owner.token, body: over, chunked: true }),
      413,
      'payload_too_large',
    );
    // a publish with an unknown header token: 401 before the body is read
    const stranger = await send('POST', publishPath, {
      token: 'nrg_u_nobody',
      body: arrayBody('x', '{}', 512 * 1024)(),
    });
    expectSmallError(stranger, 401, 'unauthorized');
  });

  it('answers a node id of 15,000 characters with a small 404 that names it clipped', async () => {
    const id = 'a'.repeat(15_000);
    for (const path of [`/nodes/${id}`, `/nodes/${id}/versions`]) {
      const answer = await send('GET', path);
      expect(answer.text.length, path.slice(0, 40)).toBeLessThan(1500);
      expect(expectSmallError(answer, 404, 'not_found').message).toMatch(/^node a+…a+ not found$/);
    }
  });

  it(`reports at most ${MAX_FIELD_ERRORS} problems, and says how many more there are`, async () => {
    const translations = Object.fromEntries(
      Array.from({ length: 3000 }, (_, i) => [`language-name-${String(i).padStart(6, '0')}`, {}]),
    );
    const answer = await send('PUT', nodePath, {
      token: owner.token,
      body: Buffer.from(JSON.stringify({ translations })),
    });
    const body = expectSmallError(answer, 400, 'invalid_request');
    expect(body.details).toHaveLength(MAX_FIELD_ERRORS);
    expect(body.message).toMatch(/and \d+ more problems/);
  });

  it('bounds every field at write, so that a full page of the public list stays small', {
    timeout: 60_000,
  }, async () => {
    const reply = (body: unknown) =>
      send('PUT', nodePath, { token: owner.token, body: Buffer.from(JSON.stringify(body)) });
    const refusals: [unknown, string][] = [
      [{ banner_url: `https://x.test/${'b'.repeat(URL_MAX)}` }, 'banner_url'],
      [{ icon: 'icon.png' }, 'icon'],
      [{ repository: 'not a url' }, 'repository'],
      [{ tags: Array(TAGS.maxItems + 1).fill('t') }, 'tags'],
      [{ tags: ['t'.repeat(TAGS.maxLength + 1)] }, 'tags.0'],
      [{ license: 'l'.repeat(5000) }, 'license'],
      [{ supported_appui_version: 'banana' }, 'supported_appui_version'],
      [{ translations: { fr: { description: 'd'.repeat(70_000) } } }, 'translations'],
    ];
    for (const [body, path] of refusals) {
      const error = expectSmallError(await reply(body), 400, 'invalid_request');
      expect(error.details?.map((d) => d.path)).toContain(path);
    }
    // twenty nodes with every field at its largest: GET /nodes?limit=100 answers, and not 480 MB
    const full = {
      name: 'n'.repeat(200),
      description: 'd'.repeat(1000),
      author: 'a'.repeat(200),
      license: 'l'.repeat(1000),
      repository: `https://x.test/${'r'.repeat(URL_MAX - 15)}`,
      icon: `https://x.test/${'i'.repeat(URL_MAX - 15)}`,
      banner_url: `https://x.test/${'b'.repeat(URL_MAX - 15)}`,
      tags: Array.from({ length: TAGS.maxItems }, (_, i) => `${i}`.padEnd(TAGS.maxLength, 't')),
      translations: { fr: { description: 'd'.repeat(60_000) } },
    };
    for (let i = 0; i < 20; i++) {
      const made = await publish(server, owner.token, 'hostile-co', `full-${i}`, '1.0.0', { node: full });
      expect(made.status, made.text.slice(0, 300)).toBe(201);
      expect((await uploadTo(made.body.signedUrl, await storedZip({ '__init__.py': '' }))).status).toBe(200);
    }
    const list = await send('GET', '/nodes?limit=100');
    expect(list.status).toBe(200);
    expect(list.text.length).toBeLessThan(8 * MiB);
    figure(
      'hostile.full_page_bytes',
      list.text.length,
      '20 nodes with every field at its maximum, GET /nodes?limit=100',
    );
  });
});

describe('requests that reach the HTTP layer oddly', () => {
  it('answers a request without a Host header in the error shape (Node answered an empty 400)', async () => {
    const answer = await new Promise<string>((done) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => done(text));
      socket.on('error', () => {});
      socket.end('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = ErrorBody.parse(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)));
    expect(body.error).toBe('invalid_request');
    expect(body.message).toMatch(/host/i);
  });
});

describe('requests pipelined on one connection', () => {
  const port = () => Number(new URL(server.url).port);

  // Found from outside: 40 connections each writing 100,000 `GET /openapi.json` and reading nothing took
  // the server from 82 to 698 MB (every request of a 64 KiB chunk was at work at once, each answer held
  // whole behind the one before), and one such connection asking for a node's list of 3,000 versions
  // (35 MB) ended the process: JavaScript heap out of memory at 4 GB. Five asking for a 2 MiB archive
  // left this server unreachable.
  it('are answered one at a time: thousands sent by clients that read nothing hold no more than a small bound', {
    timeout: 60_000,
  }, async () => {
    const before = await child.memory();
    const flood = `GET ${archivePath} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(20_000);
    const sockets = Array.from({ length: 5 }, () => {
      const socket = connect(port(), '127.0.0.1', () => socket.write(flood));
      socket.pause();
      socket.on('error', () => {});
      return socket;
    });
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);
    const during = await child.memory();
    for (const socket of sockets) socket.destroy();
    expect(during.peak - before.rss, 'peak RSS growth').toBeLessThan(48 * MiB);
    expect(child.alive()).toBe(true);
  });

  it(`past ${PIPELINED_MAX} waiting for their answer, the next is answered 503 in the error shape and the connection closes`, async () => {
    const answer = await new Promise<string>((done) => {
      const socket = connect(port(), '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('close', () => done(text));
      socket.on('error', () => {});
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(PIPELINED_MAX * 3));
    });
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    expect(statuses).toEqual([...Array(PIPELINED_MAX).fill(200), 503]);
    const body = ErrorBody.parse(JSON.parse(answer.slice(answer.lastIndexOf('\r\n\r\n') + 4)));
    expect(body.error).toBe('unavailable');
    expect(answer).toMatch(/retry-after: 1\r\n/i);
  });
});

/** HEADs sent for the descriptor count: a descriptor kept by each (the leak found) shows in the first few. */
const HEADS = figureLoad(1000, 5000);

const openDescriptors = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/** The child's descriptor count once connections from the test are gone (they close asynchronously). */
async function settledDescriptors(pid: number, atMost: number): Promise<number> {
  let count = openDescriptors(pid);
  for (let i = 0; i < 100 && count > atMost; i++) {
    await new Promise((r) => setTimeout(r, 50));
    count = openDescriptors(pid);
  }
  return count;
}

/** The child's descriptor count once the same for a second (connections of earlier tests closed), within 5 s. */
async function steadyDescriptors(pid: number): Promise<number> {
  let count = openDescriptors(pid);
  for (let i = 0, same = 0; i < 100 && same < 20; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const now = openDescriptors(pid);
    same = now === count ? same + 1 : 0;
    count = now;
  }
  return count;
}

describe('every handle closes', () => {
  it(`keeps the descriptor count after ${HEADS.toLocaleString('en')} HEADs on an archive and on a proxy result, and GETs cut short`, {
    timeout: 120_000,
  }, async () => {
    const pid = child.process.pid!;
    const before = await steadyDescriptors(pid);
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const heads = Array.from({ length: HEADS }, (_, i) => (i % 2 ? archivePath : resultPath));
    for (let i = 0; i < heads.length; i += 50) {
      const answers = await Promise.all(heads.slice(i, i + 50).map((path) => send('HEAD', path, { agent })));
      for (const answer of answers) expect(answer.status).toBe(200);
    }
    // downloads the client abandons after the first bytes
    for (let i = 0; i < 100; i++) {
      await new Promise<void>((done) => {
        const req = request(new URL(archivePath, server.url), (res) => {
          res.once('data', () => {
            req.destroy();
            done();
          });
        });
        req.on('error', () => {});
        req.end();
      });
    }
    agent.destroy();
    const after = await settledDescriptors(pid, before);
    figure('hostile.descriptors', `${before} → ${after}`, `${HEADS} HEADs and 100 abandoned downloads`);
    // Fewer is no leak: a connection of an earlier test, counted in `before`, may close meanwhile (it read 34 against 35 once under load).
    expect(after).toBeLessThanOrEqual(before);
    expect(child.alive()).toBe(true);
  });

  it('answers 503 in the error shape, and never exits, when descriptors run out (EMFILE)', {
    timeout: 60_000,
  }, async () => {
    const limited = await startChild(tempDir('nodereg-emfile-'), { fdLimit: 256, options: { log: true } });
    try {
      const base = { url: limited.url, adminToken: limited.adminToken } as TestServer;
      const user = await createUser(base, 'emfile-owner');
      await createPublisher(base, user, 'emfile-co');
      const made = await publish(base, user.token, 'emfile-co', 'emfile-node', '1.0.0');
      const uploaded = await uploadTo(made.body.signedUrl, await storedZip({ '__init__.py': '' }));
      expect(uploaded.status).toBe(200);
      const download = new URL(uploaded.body.downloadUrl).pathname;
      const port = Number(new URL(limited.url).port);
      // One connection kept for the request, then enough idle ones to use every descriptor left.
      const keeper = new Agent({ keepAlive: true, maxSockets: 1 });
      expect((await call(limited.url, 'GET', '/healthz')).status).toBe(200);
      const first = await new Promise<Answer>((done, fail) =>
        request(`${limited.url}/healthz`, { agent: keeper }, (res) => {
          res.resume();
          res.on('end', () => done({ status: res.statusCode!, text: '', ms: 0 }));
        })
          .on('error', fail)
          .end(),
      );
      expect(first.status).toBe(200);
      const idle = await Promise.all(
        Array.from(
          { length: 300 },
          () =>
            new Promise<ReturnType<typeof connect>>((done) => {
              const socket = connect(port, '127.0.0.1', () => done(socket));
              socket.on('error', () => {});
            }),
        ),
      );
      await new Promise((r) => setTimeout(r, 300));
      const answer = await new Promise<Answer>((done, fail) => {
        request(`${limited.url}${download}`, { agent: keeper }, (res) => {
          let text = '';
          res.setEncoding('latin1');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => done({ status: res.statusCode!, text, ms: 0 }));
        })
          .on('error', fail)
          .end();
      });
      expectSmallError(answer, 503, 'unavailable');
      for (const socket of idle) socket.destroy();
      keeper.destroy();
      await new Promise((r) => setTimeout(r, 300));
      expect(limited.alive(), limited.stderr().slice(-2000)).toBe(true);
      expect((await call(limited.url, 'GET', download)).status).toBe(200);
      expect(limited.stderr()).not.toMatch(/internal error/);
    } finally {
      await limited.kill();
    }
  });
});

describe('the event loop stays free', () => {
  /** Sends each attack `rounds` times while a prober in its own process times /healthz: each probe, and the p99 by attack. */
  async function probeDuringAttacks(rounds: number) {
    const prober = fork(resolve(import.meta.dirname, '../healthz-prober.js'), [server.url], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise((done) => prober.once('message', done));
    const phases: { name: string; from: number; to: number }[] = [];
    try {
      for (const attack of attacks) {
        const from = Date.now();
        for (let i = 0; i < rounds; i++) expect((await attack.send()).status).toBe(attack.status);
        phases.push({ name: attack.name, from, to: Date.now() });
      }
    } finally {
      prober.send('stop');
    }
    const { probes } = (await new Promise((done) => prober.once('message', done))) as {
      probes: { at: number; ms: number }[];
    };
    const p99 = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length * 0.99)] ?? 0;
    const during = probes.filter((p) => p.at >= phases[0].from);
    const byAttack = phases.map(
      ({ name, from, to }) =>
        `${name}: ${p99(during.filter((p) => p.at >= from && p.at <= to).map((p) => p.ms)).toFixed(0)} ms`,
    );
    return { latencies: during.map((p) => p.ms), byAttack };
  }

  // The p99's target (100 ms) is held by `npm run bench latency`; a request that holds the loop for
  // good (the quadratic prompt check held it 12 s) fails here, at its first sending (a probe every 10 ms).
  const ROUNDS = figureLoad(1, 3);
  it('answers /healthz under each hostile input', { timeout: 300_000 }, async () => {
    for (const make of [tags100k, tags12M, objects25MiB, prompt, banner, webhook]) make();
    const run = await probeDuringAttacks(ROUNDS);
    expect(run.latencies.length).toBeGreaterThan(50);
    latency(
      'hostile.healthz_p99_ms',
      run.latencies,
      0.99,
      `each attack sent ${ROUNDS} times; p99 by attack: ${run.byAttack.join('; ')}`,
    );
  });
});
