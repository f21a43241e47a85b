// The AI proxy over HTTP on a real registry (port 0, temp data dir, real SQLite), with raw fetch to
// 127.0.0.1 (no CLI): every rule at its edge and just past it, tokens, visibility, sandbox
// lifecycles with downloads and a restart, forward mode and callbacks against stand-ins.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JSON_BODY_MAX, MEDIA_URL_MAX } from '../../src/contract/limits.js';
import { JSON_BODIES_MAX } from '../../src/shared/tuning.js';
import { PNG, startServer, type TestServer } from '../helpers.js';
import { eventually, startStandIn, type Answer, type StandIn } from './stand-ins.js';

const IMAGE = PNG.toString('base64');
const MiB = 1024 * 1024;
/** A PNG whose body is over 256 KiB: prepared in the worker thread, not on the event loop. */
const BIG_PNG = Buffer.concat([PNG, Buffer.alloc(300 * 1024, 1)]);
const BIG_IMAGE = BIG_PNG.toString('base64');

interface Reply {
  status: number;
  headers: Headers;
  json: any;
}

async function request(base: string, method: string, path: string, token?: string, body?: unknown): Promise<Reply> {
  const response = await fetch(base + path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: response.status, headers: response.headers, json };
}

/** A user made by the admin; answers its token. */
async function createUser(server: TestServer, name: string): Promise<string> {
  const reply = await request(server.url, 'POST', '/users', server.adminToken, { name });
  expect(reply.status, JSON.stringify(reply.json)).toBe(201);
  return reply.json.token;
}

/** An https URL of exactly `length` characters. */
const longUrl = (length: number) => `https://127.0.0.1/${'a'.repeat(length - 'https://127.0.0.1/'.length)}`;

const RELIGHT = '/proxy/img/v1/ai/image-relight';
const SKIN = '/proxy/img/v1/ai/skin-enhancer/flexible';
const VIDEO = '/proxy/vid/extend';
const STATUS = {
  relight: (id: string) => `/proxy/img/v1/ai/image-relight/${id}`,
  'skin-enhancer': (id: string) => `/proxy/img/v1/ai/skin-enhancer/${id}`,
  video: (id: string) => `/proxy/vid/tasks/${id}/creations`,
};

describe('rules, tokens and visibility (sandbox)', () => {
  let server: TestServer;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    server = await startServer({ proxy: { sandboxDelay: 60_000, callbackBackoff: 60_000 } });
    alice = await createUser(server, 'alice');
    bob = await createUser(server, 'bob');
  });
  afterAll(() => server.close());

  const relight = { image: IMAGE };
  const skin = { image: IMAGE };
  const video = { model: 'vidq2-pro' };
  const at = (base: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> => {
    const [head, ...rest] = path.split('.');
    return rest.length
      ? { ...base, [head]: at((base[head] as Record<string, unknown>) ?? {}, rest.join('.'), value) }
      : { ...base, [head]: value };
  };
  const without = (base: Record<string, unknown>, field: string) =>
    Object.fromEntries(Object.entries(base).filter(([k]) => k !== field));

  // [route, base body, field, accepted edge values, rejected values just past them]
  const rules: [string, Record<string, unknown>, string, unknown[], unknown[]][] = [
    [RELIGHT, relight, 'light_transfer_strength', [0, 100], [-1, 101, 50.5, '50']],
    ...['whites', 'blacks', 'brightness', 'contrast', 'saturation'].map(
      (level): [string, Record<string, unknown>, string, unknown[], unknown[]] => [
        RELIGHT,
        relight,
        `advanced_settings.${level}`,
        [0, 100],
        [-1, 101, 0.5],
      ],
    ),
    [RELIGHT, relight, 'style', ['standard', 'just_composition'], ['neon', '', 'Standard']],
    [RELIGHT, relight, 'advanced_settings.engine', ['automatic', 'softy'], ['turbo']],
    [RELIGHT, relight, 'advanced_settings.transfer_light_a', ['low', 'high_on_faces'], ['extreme']],
    [RELIGHT, relight, 'advanced_settings.transfer_light_b', ['composition', 'strong_shift'], ['wobble']],
    [RELIGHT, relight, 'advanced_settings.fixed_generation', [true, false], ['yes', 1]],
    [
      RELIGHT,
      relight,
      'prompt',
      ['(warm light:1)', 'a (warm light:1.4) room', '(just parentheses)'],
      ['(warm:0.99)', '(warm:1.41)', '(warm:1.405)', '((warm:1.2))', '(warm:high)', '(warm:1.2'],
    ],
    [RELIGHT, relight, 'change_background', [false], ['no']],
    [RELIGHT, relight, 'preserve_details', [false], [0]],
    [RELIGHT, relight, 'interpolate_from_original', [true], ['true']],
    [
      RELIGHT,
      relight,
      'webhook_url',
      ['http://127.0.0.1:9/hook', 'https://localhost/hook'],
      ['ftp://127.0.0.1/hook', '/hook', 'http:127.0.0.1'],
    ],
    [RELIGHT, relight, 'image', [IMAGE, 'https://127.0.0.1/a.png'], ['', 42]],
    [SKIN, skin, 'sharpen', [0, 100], [-1, 101, 1.5]],
    [SKIN, skin, 'smart_grain', [0, 100], [-1, 101]],
    [SKIN, skin, 'optimized_for', ['enhance_skin', 'no_make_up'], ['glow']],
    [SKIN, skin, 'webhook_url', ['http://127.0.0.1:9/'], ['hook']],
    [SKIN, skin, 'image', ['https://127.0.0.1/face.png'], ['']],
    [VIDEO, video, 'model', ['vidq2-pro', 'vidq2-turbo'], ['vidq3', '']],
    [VIDEO, video, 'duration', [1, 7], [0, 8, 2.5, '5']],
    [VIDEO, video, 'images', [[IMAGE]], [[], [IMAGE, IMAGE], IMAGE]],
    [VIDEO, video, 'prompt', ['p'.repeat(2000)], ['p'.repeat(2001)]],
    [VIDEO, video, 'payload', ['p'.repeat(1_048_576)], ['p'.repeat(1_048_577)]],
    [VIDEO, video, 'resolution', ['540p', '1080p'], ['4k', '720']],
    [VIDEO, video, 'callback_url', ['http://127.0.0.1:9/cb'], ['mailto:a@b.c']],
    // An image or video given as a URL is kept and echoed as given: at most MEDIA_URL_MAX characters
    // (a 20 MB URL was stored outside the sandbox quota, for every submission).
    [RELIGHT, relight, 'image', [longUrl(MEDIA_URL_MAX)], [longUrl(MEDIA_URL_MAX + 1), ` ${longUrl(MEDIA_URL_MAX)}`]],
    [RELIGHT, relight, 'transfer_light_from_lightmap', [longUrl(MEDIA_URL_MAX)], [longUrl(MEDIA_URL_MAX + 1)]],
    [SKIN, skin, 'image', [longUrl(MEDIA_URL_MAX)], [longUrl(MEDIA_URL_MAX + 1).replace('https', 'HTTPS')]],
    [
      VIDEO,
      { ...video, video_creation_id: 'c-1' },
      'video_url',
      [longUrl(MEDIA_URL_MAX)],
      [longUrl(MEDIA_URL_MAX + 1)],
    ],
  ];

  describe.each(rules)('%s %s', (path, base, field, good, bad) => {
    it.each(good.map((value) => [JSON.stringify(value).slice(0, 40), value]))('accepts %s', async (_, value) => {
      const reply = await request(server.url, 'POST', path, alice, at(base, field, value));
      expect(reply.status, JSON.stringify(reply.json)).toBe(200);
    });
    it.each(bad.map((value) => [JSON.stringify(value).slice(0, 40), value]))(
      'rejects %s with 400 naming the field',
      async (_, value) => {
        const reply = await request(server.url, 'POST', path, alice, at(base, field, value));
        expect(reply.status).toBe(400);
        expect(reply.json).toMatchObject({ error: 'invalid_request', message: expect.stringContaining(field) });
        expect(reply.json.details).toContainEqual({ path: field, message: expect.any(String) });
      },
    );
  });

  it.each([
    [RELIGHT, relight, 'image'],
    [SKIN, skin, 'image'],
    [VIDEO, video, 'model'],
  ])('%s without its required %s is 400 naming it', async (path, base, field) => {
    const reply = await request(server.url, 'POST', path, alice, without(base, field));
    expect(reply.status).toBe(400);
    expect(reply.json.details).toContainEqual({ path: field, message: expect.any(String) });
  });

  it('both light sources are 400 naming one of them', async () => {
    const reply = await request(server.url, 'POST', RELIGHT, alice, {
      ...relight,
      transfer_light_from_lightmap: IMAGE,
      transfer_light_from_reference_image: IMAGE,
    });
    expect(reply.status).toBe(400);
    expect(reply.json.details).toContainEqual({
      path: 'transfer_light_from_reference_image',
      message: expect.stringMatching(/together/),
    });
    for (const one of ['transfer_light_from_lightmap', 'transfer_light_from_reference_image']) {
      expect((await request(server.url, 'POST', RELIGHT, alice, { ...relight, [one]: IMAGE })).status).toBe(200);
    }
  });

  it('video_url and video_creation_id go together: both or neither', async () => {
    expect(
      (
        await request(server.url, 'POST', VIDEO, alice, {
          ...video,
          video_url: 'https://127.0.0.1/v.mp4',
          video_creation_id: 'c',
        })
      ).status,
    ).toBe(200);
    const urlOnly = await request(server.url, 'POST', VIDEO, alice, { ...video, video_url: 'https://127.0.0.1/v.mp4' });
    expect(urlOnly.status).toBe(400);
    expect(urlOnly.json.details).toContainEqual({ path: 'video_creation_id', message: expect.any(String) });
    const idOnly = await request(server.url, 'POST', VIDEO, alice, { ...video, video_creation_id: 'c' });
    expect(idOnly.status).toBe(400);
    expect(idOnly.json.details).toContainEqual({ path: 'video_url', message: expect.any(String) });
  });

  it.each([
    [RELIGHT, { ...relight, webhook_url: 'http://10.0.0.1/hook' }, 'webhook_url'],
    [SKIN, { ...skin, webhook_url: 'https://example.com/hook' }, 'webhook_url'],
    [VIDEO, { ...video, callback_url: 'http://[::2]/cb' }, 'callback_url'],
  ])('%s: a callback to a host outside --callback-allow is 400 naming %s', async (path, body, field) => {
    const reply = await request(server.url, 'POST', path, alice, body);
    expect(reply.status).toBe(400);
    expect(reply.json.details).toContainEqual({ path: field, message: expect.stringMatching(/not allowed/) });
  });

  it('malformed JSON is 400, another content type 415, both in the error shape', async () => {
    const malformed = await request(server.url, 'POST', RELIGHT, alice, '{"image":');
    expect(malformed).toMatchObject({ status: 400, json: { error: 'invalid_request' } });
    const response = await fetch(server.url + RELIGHT, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'text/plain' },
      body: 'image',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ error: 'unsupported_media_type' });
  });

  it('a body over 256 KiB (checked in a worker thread) gets the same 400s as a small one', async () => {
    const padded = { image: BIG_IMAGE };
    for (const [path, wrong] of [
      [RELIGHT, { light_transfer_strength: 101, style: 'neon' }],
      [SKIN, { sharpen: -1 }],
      [RELIGHT, { webhook_url: 'http://10.0.0.1/hook' }],
      [VIDEO, { model: 'vidq2-pro', images: [BIG_IMAGE, IMAGE], video_url: 'https://127.0.0.1/v.mp4' }],
    ] as const) {
      const small = await request(server.url, 'POST', path, alice, { image: IMAGE, ...wrong });
      const large = await request(server.url, 'POST', path, alice, { ...padded, ...wrong });
      expect(small.status).toBe(400);
      expect(large).toMatchObject({ status: 400, json: { ...small.json, details: expect.any(Array) } });
      expect(large.json.details).toEqual(small.json.details);
    }
    const malformed = await request(server.url, 'POST', RELIGHT, alice, `{"image":"${BIG_IMAGE}"`);
    expect(malformed).toMatchObject({
      status: 400,
      json: { error: 'invalid_request', message: expect.stringMatching(/^malformed JSON: /) },
    });
  });

  it('every proxy route needs a token: none or an unknown one is 401', async () => {
    const routes: [string, string, unknown][] = [
      ['POST', RELIGHT, relight],
      ['POST', SKIN, skin],
      ['POST', VIDEO, video],
      ['GET', STATUS.relight('x'), undefined],
      ['GET', STATUS['skin-enhancer']('x'), undefined],
      ['GET', STATUS.video('x'), undefined],
    ];
    for (const [method, path, body] of routes) {
      for (const token of [undefined, 'nrg_u_unknown']) {
        const reply = await request(server.url, method, path, token, body);
        expect(reply.status, `${method} ${path}`).toBe(401);
        expect(reply.json.error).toBe('unauthorized');
      }
    }
  });

  it('a token is checked before the body: no token and a bad body is 401', async () => {
    expect((await request(server.url, 'POST', RELIGHT, undefined, { light_transfer_strength: 500 })).status).toBe(401);
  });

  it('a task is visible to its creator, through a PAT of theirs, and to admins; to anyone else 404', async () => {
    const created = await request(server.url, 'POST', RELIGHT, alice, relight);
    const id = created.json.data.task_id;
    expect((await request(server.url, 'GET', STATUS.relight(id), alice)).status).toBe(200);
    expect((await request(server.url, 'GET', STATUS.relight(id), server.adminToken)).status).toBe(200);
    const other = await request(server.url, 'GET', STATUS.relight(id), bob);
    expect(other).toMatchObject({ status: 404, json: { error: 'not_found' } });
    expect((await request(server.url, 'GET', STATUS['skin-enhancer'](id), alice)).status).toBe(404);
    expect(
      (await request(server.url, 'GET', STATUS.relight('00000000-0000-0000-0000-000000000000'), alice)).status,
    ).toBe(404);

    expect((await request(server.url, 'POST', '/publishers', alice, { id: 'alice-pub', name: 'Alice' })).status).toBe(
      201,
    );
    const pat = await request(server.url, 'POST', '/publishers/alice-pub/tokens', alice, { name: 'ci' });
    expect(pat.status).toBe(201);
    expect((await request(server.url, 'GET', STATUS.relight(id), pat.json.token)).status).toBe(200);
    const byPat = await request(server.url, 'POST', SKIN, pat.json.token, skin);
    expect((await request(server.url, 'GET', STATUS['skin-enhancer'](byPat.json.data.task_id), alice)).status).toBe(
      200,
    );
  });

  it('an unknown result is 404 in the error shape, without a token', async () => {
    const reply = await request(server.url, 'GET', '/proxy/results/not-a-result.png');
    expect(reply).toMatchObject({ status: 404, json: { error: 'not_found' } });
  });
});

describe('sandbox lifecycles over HTTP', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    while (servers.length) await servers.pop()!.close();
  });

  async function start(options: Parameters<typeof startServer>[0] = {}) {
    const server = await startServer({ ...options, proxy: { sandboxDelay: 200, ...options.proxy } });
    servers.push(server);
    return server;
  }

  async function pollUntilDone(server: TestServer, token: string, kind: keyof typeof STATUS, id: string) {
    return eventually(async () => {
      const reply = await request(server.url, 'GET', STATUS[kind](id), token);
      expect(reply.status, JSON.stringify(reply.json)).toBe(200);
      const status = kind === 'video' ? reply.json.state : reply.json.data.status;
      return ['COMPLETED', 'FAILED', 'success', 'failed'].includes(status) ? reply.json : undefined;
    }, `${kind} ${id} to finish`);
  }

  it('relight and skin enhancer complete; the result is the image given, downloadable without a token', async () => {
    const server = await start();
    const alice = await createUser(server, 'alice');
    for (const [path, kind] of [
      [RELIGHT, 'relight'],
      [SKIN, 'skin-enhancer'],
    ] as const) {
      const created = await request(server.url, 'POST', path, alice, { image: IMAGE });
      expect(created.status).toBe(200);
      expect(created.json).toEqual({ data: { task_id: expect.any(String), status: 'CREATED', generated: [] } });
      const done = await pollUntilDone(server, alice, kind, created.json.data.task_id);
      expect(done.data.status).toBe('COMPLETED');
      expect(done.data.generated[0].startsWith(`${server.url}/proxy/results/`)).toBe(true);
      const download = await fetch(done.data.generated[0]);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('image/png');
      expect(download.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await download.arrayBuffer()).equals(PNG)).toBe(true);
    }
  });

  it('a large image (decoded in the worker thread) is the result, byte for byte', async () => {
    const server = await start();
    const alice = await createUser(server, 'alice');
    const created = await request(server.url, 'POST', RELIGHT, alice, { image: `data:image/png;base64,${BIG_IMAGE}` });
    expect(created.status).toBe(200);
    const done = await pollUntilDone(server, alice, 'relight', created.json.data.task_id);
    const download = await fetch(done.data.generated[0]);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await download.arrayBuffer()).equals(BIG_PNG)).toBe(true);
  });

  it('video completes with the credits of DESIGN.md §4 and a downloadable placeholder', async () => {
    const server = await start();
    const alice = await createUser(server, 'alice');
    const created = await request(server.url, 'POST', VIDEO, alice, {
      model: 'vidq2-turbo',
      resolution: '1080p',
      duration: 3,
    });
    expect(created.json).toMatchObject({
      state: 'created',
      credits: 60,
      model: 'vidq2-turbo',
      resolution: '1080p',
      duration: 3,
    });
    const done = await pollUntilDone(server, alice, 'video', created.json.task_id);
    expect(done).toMatchObject({ task_id: created.json.task_id, state: 'success', credits: 60 });
    const download = await fetch(done.creations[0].url);
    expect(download.headers.get('content-type')).toBe('video/mp4');
    expect(
      Buffer.from(await download.arrayBuffer())
        .subarray(4, 8)
        .toString(),
    ).toBe('ftyp');
  });

  it('a result answers one byte range (206) and HEAD (its size, no body), as archives do', async () => {
    const server = await start();
    const alice = await createUser(server, 'alice');
    const created = await request(server.url, 'POST', RELIGHT, alice, { image: BIG_IMAGE });
    const url = (await pollUntilDone(server, alice, 'relight', created.json.data.task_id)).data.generated[0];
    const part = await fetch(url, { headers: { range: 'bytes=2-9' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 2-9/${BIG_PNG.length}`);
    expect(part.headers.get('content-length')).toBe('8');
    expect(Buffer.from(await part.arrayBuffer()).equals(BIG_PNG.subarray(2, 10))).toBe(true);
    const tail = await fetch(url, { headers: { range: 'bytes=-5' } });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(BIG_PNG.subarray(-5))).toBe(true);
    // one that cannot be satisfied, or several, get the whole file (RFC 9110 allows it)
    for (const range of [`bytes=${BIG_PNG.length}-`, 'bytes=0-1,4-5']) {
      const whole = await fetch(url, { headers: { range } });
      expect(whole.status).toBe(200);
      expect(whole.headers.get('accept-ranges')).toBe('bytes');
      expect(Buffer.from(await whole.arrayBuffer()).equals(BIG_PNG)).toBe(true);
    }
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(BIG_PNG.length));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('polls survive a restart on the same data dir, and result URLs follow the new address', async () => {
    const first = await start({ proxy: { sandboxDelay: 400 } });
    const alice = await createUser(first, 'alice');
    const created = await request(first.url, 'POST', RELIGHT, alice, { image: IMAGE });
    await first.close();
    servers.pop();
    const second = await start({ dataDir: first.dataDir, adminToken: first.adminToken });
    const done = await pollUntilDone(second, alice, 'relight', created.json.data.task_id);
    expect(done.data.generated[0].startsWith(`${second.url}/proxy/results/`)).toBe(true);
    expect(Buffer.from(await (await fetch(done.data.generated[0])).arrayBuffer()).equals(PNG)).toBe(true);
  });

  it('callbacks reach a receiver on 127.0.0.1, verifiable with DIR/callback-key', async () => {
    const receiver = await startStandIn(() => ({ status: 200 }));
    try {
      const server = await start();
      const alice = await createUser(server, 'alice');
      const created = await request(server.url, 'POST', VIDEO, alice, {
        model: 'vidq2-pro',
        callback_url: `${receiver.url}/cb?source=nodereg`,
      });
      await eventually(() => (receiver.requests.length >= 4 ? true : undefined), 'four callbacks');
      const key = Buffer.from(readFileSync(join(server.dataDir, 'callback-key'), 'utf8').trim(), 'hex');
      for (const received of receiver.requests) {
        expect(received.path).toBe('/cb?source=nodereg');
        expect(received.headers['x-nodereg-signature']).toBe(
          `sha256=${createHmac('sha256', key).update(received.raw).digest('hex')}`,
        );
        expect(received.headers['x-nodereg-event']).toBe('task.status_changed');
      }
      expect(receiver.requests.map((r) => (r.json as { state: string }).state)).toEqual([
        'created',
        'queueing',
        'processing',
        'success',
      ]);
      expect((receiver.requests[3].json as { task_id: string }).task_id).toBe(created.json.task_id);
    } finally {
      await receiver.close();
    }
  });
});

describe('forward mode over HTTP', () => {
  let upstream: StandIn;
  let answer: (path: string, method: string) => Answer;
  let server: TestServer;
  let alice: string;
  beforeAll(async () => {
    upstream = await startStandIn((r) => answer(r.path, r.method));
    server = await startServer({
      proxy: {
        imgUpstream: `${upstream.url}/img`,
        vidUpstream: `${upstream.url}/vid`,
        imgKey: 'provider-img-key',
        vidKey: 'provider-vid-key',
        vidKeyHeader: 'X-Api-Key',
        upstreamTimeout: 300,
      },
    });
    alice = await createUser(server, 'alice');
  });
  afterAll(async () => {
    await server.close();
    await upstream.close();
  });

  it('relays with the provider key and never the caller token; ids mapped; polls relayed', async () => {
    answer = (path, method) =>
      method === 'POST'
        ? { status: 200, json: { data: { task_id: 'prov-7', generated: [] } } }
        : {
            status: 200,
            json: {
              data: { task_id: 'prov-7', status: 'COMPLETED', generated: ['https://cdn.provider.test/out.png'] },
            },
          };
    const created = await request(server.url, 'POST', RELIGHT, alice, { image: IMAGE, style: 'clean' });
    expect(created.status).toBe(200);
    const id = created.json.data.task_id;
    expect(id).not.toBe('prov-7');
    const relayed = upstream.requests.at(-1)!;
    expect(relayed.path).toBe('/img/v1/ai/image-relight');
    expect(relayed.headers.authorization).toBe('Bearer provider-img-key');
    expect(JSON.stringify(relayed.headers)).not.toContain(alice);
    expect(relayed.raw).not.toContain(alice);
    expect(relayed.json).toMatchObject({
      image: IMAGE,
      style: 'clean',
      light_transfer_strength: 100,
      change_background: true,
      preserve_details: true,
    });

    const polled = await request(server.url, 'GET', STATUS.relight(id), alice);
    expect(polled.json).toEqual({
      data: { task_id: id, status: 'COMPLETED', generated: ['https://cdn.provider.test/out.png'] },
    });
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'GET', path: '/img/v1/ai/image-relight/prov-7' });
    expect(JSON.stringify(upstream.requests.at(-1)!.headers)).not.toContain(alice);
  });

  it('a large body (serialised in the worker thread) is relayed whole, with its length and without the callback URL', async () => {
    answer = () => ({ status: 200, json: { data: { task_id: 'prov-big', generated: [] } } });
    const created = await request(server.url, 'POST', SKIN, alice, {
      image: BIG_IMAGE,
      webhook_url: 'http://127.0.0.1:9/hook',
    });
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const relayed = upstream.requests.at(-1)!;
    expect(relayed.path).toBe('/img/v1/ai/skin-enhancer/flexible');
    expect(relayed.headers['content-length']).toBe(String(Buffer.byteLength(relayed.raw)));
    expect(relayed.json).toEqual({ image: BIG_IMAGE, optimized_for: 'enhance_skin', sharpen: 0, smart_grain: 2 });
  });

  it('video: the key in its own header; /extend and /tasks/{id}/creations', async () => {
    answer = (path, method) =>
      method === 'POST'
        ? { status: 200, json: { task_id: 'prov-v', state: 'queueing', credits: 70 } }
        : { status: 200, json: { task_id: 'prov-v', state: 'processing', credits: 70, creations: [] } };
    const created = await request(server.url, 'POST', VIDEO, alice, { model: 'vidq2-pro' });
    expect(created.json).toEqual({ task_id: expect.any(String), state: 'queueing', credits: 70 });
    expect(upstream.requests.at(-1)).toMatchObject({
      path: '/vid/extend',
      json: { model: 'vidq2-pro', duration: 5, resolution: '720p' },
    });
    expect(upstream.requests.at(-1)!.headers['x-api-key']).toBe('provider-vid-key');
    expect(upstream.requests.at(-1)!.headers.authorization).toBeUndefined();
    const polled = await request(server.url, 'GET', STATUS.video(created.json.task_id), alice);
    expect(polled.json).toEqual({ task_id: created.json.task_id, state: 'processing', credits: 70, creations: [] });
    expect(upstream.requests.at(-1)!.path).toBe('/vid/tasks/prov-v/creations');
  });

  it.each([
    [{ status: 400, json: { message: 'image too small' } }, 400, 'invalid_request'],
    [{ status: 404, json: {} }, 404, 'not_found'],
    [{ status: 422, json: { message: 'unprocessable' } }, 422, 'invalid_request'],
    [{ status: 500, json: {} }, 502, 'upstream_error'],
    [{ status: 502, text: 'bad gateway' }, 502, 'upstream_error'],
    [{ status: 401, json: {} }, 502, 'upstream_error'],
    [{ status: 403, json: {} }, 502, 'upstream_error'],
    ['hang', 504, 'upstream_timeout'],
  ] as const)('a provider answering %j is %s %s', async (providerAnswer, status, code) => {
    answer = () => providerAnswer as Answer;
    const reply = await request(server.url, 'POST', SKIN, alice, { image: IMAGE });
    expect(reply.status).toBe(status);
    expect(reply.json).toMatchObject({ error: code, message: expect.any(String) });
    expect(JSON.stringify(reply.json)).not.toContain('provider-img-key');
  });
});

describe('a provider that stalls', () => {
  // Bodies were counted against JSON_BODIES_MAX only while they were read: submissions waiting on the
  // provider held theirs (twice: the body and the relayed copy) beyond it, 20 of 24 MB took 1.1 GB.
  it(`holds at most ${JSON_BODIES_MAX / MiB} MiB of bodies waiting on it: past that 503, and the room comes back`, {
    timeout: 60_000,
  }, async () => {
    let release!: () => void;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    const upstream = await startStandIn(async (_, index) => {
      if (index < 5) await stalled;
      return { status: 200, json: { data: { task_id: `prov-${index}`, generated: [] } } };
    });
    const server = await startServer({ proxy: { imgUpstream: upstream.url, imgKey: 'k', upstreamTimeout: 60_000 } });
    try {
      const alice = await createUser(server, 'alice');
      const body = JSON.stringify({ image: 'A'.repeat(JSON_BODY_MAX - MiB) });
      const waiting = Array.from({ length: 5 }, () => request(server.url, 'POST', RELIGHT, alice, body));
      await eventually(
        () => (upstream.requests.length === 5 ? true : undefined),
        'five submissions at the provider',
        30_000,
      );
      const sixth = request(server.url, 'POST', RELIGHT, alice, body);
      const relayed = eventually(
        () => (upstream.requests.length > 5 ? 'relayed' : undefined),
        'a sixth submission at the provider',
        30_000,
      );
      const refused = await Promise.race([sixth, relayed]);
      expect(refused).toMatchObject({ status: 503, json: { error: 'unavailable' } });
      release();
      for (const done of await Promise.all(waiting)) expect(done.status).toBe(200);
      expect((await request(server.url, 'POST', RELIGHT, alice, body)).status).toBe(200);
    } finally {
      release();
      await server.close();
      await upstream.close();
    }
  });
});
