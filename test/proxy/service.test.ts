// The AI proxy service on a real SQLite store and data dir, below the HTTP layer: sandbox lifecycles,
// forward mode against a stand-in provider, and callbacks to a stand-in receiver, all on 127.0.0.1.
import { createHmac } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buffer as readAll } from 'node:stream/consumers';
import postgres from 'postgres';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RelightBody, SkinEnhancerBody, VideoExtendBody } from '../../src/contract/proxy.js';
import { HttpError } from '../../src/server/errors.js';
import type { ProxyOptions } from '../../src/server/proxy/options.js';
import { CALLBACKS_IN_FLIGHT, createProxyService, type ProxyService } from '../../src/server/proxy/service.js';
import { createTaskStore, type TaskStore } from '../../src/server/proxy/store.js';
import { createPostgresTaskStore } from '../../src/server/proxy/postgres-task-store.js';
import { migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import { testPostgres } from '../postgres.js';
import { createLocalArchiveStorage } from '../../src/server/archives/storage.js';
import { UpstreamRejection } from '../../src/server/proxy/upstream.js';
import type { Principal } from '../../src/server/route.js';
import { loadKeys } from '../../src/server/secrets.js';
import { openDatabase } from '../../src/server/store/db.js';
import { PNG, tempDir } from '../helpers.js';
import { eventually, startStandIn, type Answer, type StandIn } from './stand-ins.js';
import { DEFAULT_CREATION_CAPS } from '../../src/server/services/creation-caps.js';

const alice: Principal = { kind: 'user', userId: 'alice', admin: false, tokenId: 'ta' };
const bob: Principal = { kind: 'user', userId: 'bob', admin: false, tokenId: 'tb' };
const admin: Principal = { kind: 'user', userId: 'root', admin: true, tokenId: 'tr' };
const alicePat: Principal = { kind: 'pat', userId: 'alice', admin: false, tokenId: 'tp', publisherId: 'acme' };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface Harness {
  service: ProxyService;
  dataDir: string;
  callbackKey: Buffer;
  logs: string[];
  /** How many times the service has changed a task in its store (`TaskStore.update`). */
  updates(): number;
  close(): Promise<void>;
}

/** A proxy service on a data dir (a fresh one, or the one given to simulate a restart). */
interface TaskBackend {
  name: string;
  /** The task store of this data dir (the same one again for a restart on it), and how to close it. */
  open(dataDir: string): Promise<{ tasks: TaskStore; close(): unknown }>;
}

const postgresServer = testPostgres();
const databases = new Map<string, string>();
const taskBackends: TaskBackend[] = [
  {
    name: 'SQLite',
    async open(dataDir) {
      const db = openDatabase(join(dataDir, 'registry.db'));
      return { tasks: createTaskStore(db), close: () => db.close() };
    },
  },
];
if (postgresServer) {
  taskBackends.push({
    name: 'PostgreSQL',
    async open(dataDir) {
      if (!databases.has(dataDir)) databases.set(dataDir, await (await postgresServer).migratedDatabase());
      const sql = postgres(databases.get(dataDir)!, { max: 4, onnotice: () => {} });
      await migratePostgres(sql);
      return { tasks: createPostgresTaskStore(sql), close: () => sql.end() };
    },
  });
}
let backend: TaskBackend;

async function harness(
  proxy: ProxyOptions = {},
  dataDir = tempDir('nodereg-proxy-'),
  publicUrl = () => 'http://127.0.0.1:4880',
): Promise<Harness> {
  const db = await backend.open(dataDir);
  const keys = loadKeys(dataDir);
  const logs: string[] = [];
  let updates = 0;
  const tasks: TaskStore = { ...db.tasks, update: (...args) => (updates++, db.tasks.update(...args)) };
  const service = createProxyService({
    tasks,
    archives: createLocalArchiveStorage(join(dataDir, 'archives')),
    keys,
    options: {
      dataDir,
      host: '127.0.0.1',
      port: 0,
      review: 'auto',
      maxArchive: 1,
      maxUnpacked: 1,
      caps: DEFAULT_CREATION_CAPS,
      proxy,
    },
    publicUrl,
    log: (line) => logs.push(line),
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await service.close();
    await db.close();
  };
  cleanups.push(close);
  return { service, dataDir, callbackKey: keys.callback, logs, updates: () => updates, close };
}

async function standIn(
  respond: (request: import('./stand-ins.js').Recorded, index: number) => Answer | Promise<Answer>,
): Promise<StandIn> {
  const server = await startStandIn(respond);
  cleanups.push(() => server.close());
  return server;
}

const relight = (body: Record<string, unknown>) => RelightBody.parse({ image: PNG.toString('base64'), ...body });
const skin = (body: Record<string, unknown>) => SkinEnhancerBody.parse({ image: PNG.toString('base64'), ...body });
const video = (body: Record<string, unknown>) => VideoExtendBody.parse({ model: 'vidq2-pro', ...body });
const taskIdOf = (reply: Record<string, unknown>) =>
  ((reply.data as { task_id?: string } | undefined)?.task_id ?? reply.task_id) as string;

/** Polls a task until it reaches a final state, collecting the distinct statuses seen. */
async function pollToEnd(service: ProxyService, kind: 'relight' | 'skin-enhancer' | 'video', id: string, who = alice) {
  const seen: string[] = [];
  const last = await eventually(async () => {
    const answer = (await service.status(kind, id, who)) as Record<string, unknown>;
    const view = (kind === 'video' ? answer : answer.data) as Record<string, unknown>;
    const status = String(kind === 'video' ? view.state : view.status);
    if (seen.at(-1) !== status) seen.push(status);
    return ['COMPLETED', 'FAILED', 'success', 'failed'].includes(status) ? answer : undefined;
  }, `${kind} task ${id} to finish`);
  return { seen, last };
}

const resultName = (url: string) => url.split('/proxy/results/')[1];

describe.each(taskBackends)('proxy service on $name', (each) => {
  beforeAll(() => {
    backend = each;
  });

  describe('sandbox', () => {
    it('walks a relight task through CREATED, IN_PROGRESS, COMPLETED; its result is the image given', async () => {
      const { service } = await harness({ sandboxDelay: 300 });
      const reply = await service.submit('relight', alice, relight({}));
      expect(reply).toEqual({ data: { task_id: expect.any(String), status: 'CREATED', generated: [] } });
      const id = taskIdOf(reply);
      const { seen, last } = await pollToEnd(service, 'relight', id);
      // In order, never back; the first poll may come after CREATED on a loaded machine (the reply above was CREATED).
      expect(seen).toEqual(['CREATED', 'IN_PROGRESS', 'COMPLETED'].filter((status) => seen.includes(status)));
      expect(seen.at(-1)).toBe('COMPLETED');
      const generated = (last.data as { generated: string[] }).generated;
      expect(generated).toHaveLength(1);
      expect(generated[0]).toMatch(/^http:\/\/127\.0\.0\.1:4880\/proxy\/results\/[\w-]{32}\.png$/);
      const file = await service.resultFile(resultName(generated[0]));
      expect(file.contentType).toBe('image/png');
      expect((await readAll(file.stream)).equals(PNG)).toBe(true);
    });

    it('skin enhancer given a URL: the URL itself is the result', async () => {
      const { service } = await harness({ sandboxDelay: 0 });
      const id = taskIdOf(await service.submit('skin-enhancer', alice, skin({ image: 'https://127.0.0.1/face.png' })));
      const answer = (await service.status('skin-enhancer', id, alice)) as { data: Record<string, unknown> };
      expect(answer.data).toEqual({ task_id: id, status: 'COMPLETED', generated: ['https://127.0.0.1/face.png'] });
    });

    it('an image that is neither base64 nor a URL ends FAILED with the reason', async () => {
      const { service } = await harness({ sandboxDelay: 0 });
      const id = taskIdOf(await service.submit('relight', alice, relight({ image: 'this is not an image!' })));
      const answer = (await service.status('relight', id, alice)) as { data: Record<string, unknown> };
      expect(answer.data).toMatchObject({ status: 'FAILED', generated: [] });
      expect(String(answer.data.error)).toMatch(/neither base64/);
    });

    it('walks a video task through created, queueing, processing, success, echoing the request but not its content', async () => {
      const { service } = await harness({ sandboxDelay: 300 });
      const reply = await service.submit(
        'video',
        alice,
        video({
          prompt: 'pan left',
          video_url: 'https://127.0.0.1/clip.mp4',
          video_creation_id: 'c-1',
          images: [PNG.toString('base64')],
          payload: '{"seed":1}',
        }),
      );
      expect(reply).not.toHaveProperty('images');
      expect(reply).not.toHaveProperty('payload');
      expect(reply).toMatchObject({
        state: 'created',
        credits: 70,
        model: 'vidq2-pro',
        duration: 5,
        resolution: '720p',
        prompt: 'pan left',
        video_url: 'https://127.0.0.1/clip.mp4',
        video_creation_id: 'c-1',
      });
      expect(new Date(String(reply.created_at)).toISOString()).toBe(reply.created_at);
      const { seen, last } = await pollToEnd(service, 'video', taskIdOf(reply));
      expect(seen.at(-1)).toBe('success');
      expect(seen.every((state) => ['created', 'queueing', 'processing', 'success'].includes(state))).toBe(true);
      expect(last).toEqual({
        task_id: taskIdOf(reply),
        state: 'success',
        credits: 70,
        creations: [{ id: expect.any(String), url: 'https://127.0.0.1/clip.mp4' }],
      });
    });

    it('a video without video_url gets a generated placeholder file', async () => {
      const { service } = await harness({ sandboxDelay: 0 });
      const id = taskIdOf(await service.submit('video', alice, video({})));
      const answer = (await service.status('video', id, alice)) as { creations: { url: string }[] };
      const file = await service.resultFile(resultName(answer.creations[0].url));
      expect(file.contentType).toBe('video/mp4');
      expect((await readAll(file.stream)).subarray(4, 8).toString()).toBe('ftyp');
    });

    // DESIGN.md §4: base + per_second × (duration − 1)
    it("a video costs its model and resolution's base plus a rate per second after the first", async () => {
      const { service } = await harness({ sandboxDelay: 0 });
      for (const [model, resolution, duration, credits] of [
        ['vidq2-pro', '540p', 1, 30],
        ['vidq2-pro', '720p', 5, 70],
        ['vidq2-pro', '720p', 7, 90],
        ['vidq2-pro', '1080p', 1, 60],
        ['vidq2-pro', '1080p', 7, 150],
        ['vidq2-turbo', '540p', 1, 15],
        ['vidq2-turbo', '720p', 3, 25],
        ['vidq2-turbo', '1080p', 7, 100],
      ] as const) {
        const what = `${model} at ${resolution} for ${duration} s`;
        const reply = await service.submit('video', alice, video({ model, resolution, duration }));
        expect(reply.credits, what).toBe(credits);
        const status = (await service.status('video', taskIdOf(reply), alice)) as { credits: number };
        expect(status.credits, what).toBe(credits);
      }
    });

    it('a task is visible to its creator (also through a PAT) and to admins; to anyone else it is 404', async () => {
      const { service } = await harness({ sandboxDelay: 0 });
      const id = taskIdOf(await service.submit('relight', alice, relight({})));
      await expect(service.status('relight', id, alicePat)).resolves.toBeDefined();
      await expect(service.status('relight', id, admin)).resolves.toBeDefined();
      await expect(service.status('relight', id, bob)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(service.status('skin-enhancer', id, alice)).rejects.toMatchObject({ status: 404 });
      await expect(service.status('relight', 'no-such-task', alice)).rejects.toMatchObject({ status: 404 });
    });

    it('polls survive a restart on the same data dir; results stay downloadable', async () => {
      const first = await harness({ sandboxDelay: 400 });
      const id = taskIdOf(await first.service.submit('relight', alice, relight({})));
      await first.close();
      const second = await harness({ sandboxDelay: 5_000 }, first.dataDir);
      // the delay the task was created with still rules it
      const { last } = await pollToEnd(second.service, 'relight', id);
      const generated = (last.data as { generated: string[] }).generated;
      expect((await readAll((await second.service.resultFile(resultName(generated[0]))).stream)).equals(PNG)).toBe(
        true,
      );
    });

    it('a result file removed from disk answers 404, not an error', async () => {
      const { service, dataDir } = await harness({ sandboxDelay: 0 });
      const id = taskIdOf(await service.submit('relight', alice, relight({})));
      const answer = (await service.status('relight', id, alice)) as { data: { generated: string[] } };
      const name = resultName(answer.data.generated[0]);
      rmSync(join(dataDir, 'archives', '_proxy-results', name));
      await expect(service.resultFile(name)).rejects.toMatchObject({ status: 404 });
    });

    it('results expire: after their time the file is gone and the URL is 404', async () => {
      const { service, dataDir } = await harness({ sandboxDelay: 0, resultTtl: 1 });
      const id = taskIdOf(await service.submit('relight', alice, relight({})));
      const answer = (await service.status('relight', id, alice)) as { data: { generated: string[] } };
      await new Promise((resolve) => setTimeout(resolve, 5));
      await expect(service.resultFile(resultName(answer.data.generated[0]))).rejects.toThrow(/expired/);
      await (await harness({}, dataDir)).close(); // a start purges expired files
      expect(() =>
        readFileSync(join(dataDir, 'archives', '_proxy-results', resultName(answer.data.generated[0]))),
      ).toThrow();
    });
  });

  describe('callbacks', () => {
    const verify = (key: Buffer, raw: string, header: unknown) =>
      header === `sha256=${createHmac('sha256', key).update(raw).digest('hex')}`;

    it('each status change is POSTed, signed, with the event and a unique delivery id; no data wrapper for images', async () => {
      const receiver = await standIn(() => ({ status: 204 }));
      const { service, callbackKey, dataDir } = await harness({ sandboxDelay: 200 });
      // receivers verify with the hex key in DIR/callback-key
      expect(Buffer.from(readFileSync(join(dataDir, 'callback-key'), 'utf8'), 'hex').equals(callbackKey)).toBe(true);
      const id = taskIdOf(await service.submit('relight', alice, relight({ webhook_url: `${receiver.url}/hook` })));
      await eventually(() => (receiver.requests.length >= 3 ? true : undefined), 'three callbacks');
      expect(receiver.requests.map((r) => (r.json as { status: string }).status)).toEqual([
        'CREATED',
        'IN_PROGRESS',
        'COMPLETED',
      ]);
      for (const request of receiver.requests) {
        expect(request.method).toBe('POST');
        expect(request.path).toBe('/hook');
        expect(request.headers['x-nodereg-event']).toBe('task.status_changed');
        expect(request.headers['content-type']).toBe('application/json');
        expect(verify(callbackKey, request.raw, request.headers['x-nodereg-signature'])).toBe(true);
        expect(verify(callbackKey, `${request.raw} `, request.headers['x-nodereg-signature'])).toBe(false);
        expect((request.json as { task_id: string }).task_id).toBe(id);
      }
      expect(new Set(receiver.requests.map((r) => r.headers['x-nodereg-delivery'])).size).toBe(3);
      expect(receiver.requests[2].json).toEqual({
        task_id: id,
        status: 'COMPLETED',
        generated: [expect.stringContaining('/proxy/results/')],
      });
    });

    it('video callbacks carry the poll shape with every state in order', async () => {
      const receiver = await standIn(() => ({ status: 200, json: { ok: true } }));
      const { service } = await harness({ sandboxDelay: 150 });
      const id = taskIdOf(await service.submit('video', alice, video({ callback_url: receiver.url })));
      await eventually(() => (receiver.requests.length >= 4 ? true : undefined), 'four callbacks');
      expect(receiver.requests.map((r) => (r.json as { state: string }).state)).toEqual([
        'created',
        'queueing',
        'processing',
        'success',
      ]);
      expect(receiver.requests[3].json).toEqual({
        task_id: id,
        state: 'success',
        credits: 70,
        creations: [{ id: expect.any(String), url: expect.any(String) }],
      });
    });

    it('a receiver that fails twice then succeeds gets the event, under the same delivery id', async () => {
      const receiver = await standIn((_, index) => (index < 2 ? { status: 503, text: 'busy' } : { status: 200 }));
      const { service } = await harness({ sandboxDelay: 60_000, callbackBackoff: 20 });
      const id = taskIdOf(await service.submit('skin-enhancer', alice, skin({ webhook_url: receiver.url })));
      await eventually(
        async () => ((await service.deliveries(id))[0]?.state === 'delivered' ? true : undefined),
        'the delivery to succeed',
      );
      expect(receiver.requests).toHaveLength(3);
      expect(new Set(receiver.requests.map((r) => r.headers['x-nodereg-delivery'])).size).toBe(1);
      expect((await service.deliveries(id))[0]).toMatchObject({ state: 'delivered', attempts: 3 });
    });

    it('a receiver URL with a user and password gets them as Basic authentication, never in a log', async () => {
      const receiver = await standIn(() => ({ status: 401 }));
      const { service, logs } = await harness({ sandboxDelay: 60_000, callbackBackoff: 10 });
      const withPassword = receiver.url.replace('http://', 'http://hook%20user:p%40ss:w0rd@');
      const id = taskIdOf(
        await service.submit('skin-enhancer', alice, skin({ webhook_url: `${withPassword}/hook?x=1` })),
      );
      await eventually(
        async () => ((await service.deliveries(id))[0]?.state === 'failed' ? true : undefined),
        'the delivery to be given up',
      );
      // fetch refuses a URL with credentials: every attempt failed before it was sent
      expect(receiver.requests).toHaveLength(4);
      expect(receiver.requests[0].path).toBe('/hook?x=1');
      expect(receiver.requests[0].headers.authorization).toBe(
        `Basic ${Buffer.from('hook user:p@ss:w0rd').toString('base64')}`,
      );
      expect(
        logs.some(
          (line) => line.includes('to http://***@127.0.0.1:') && line.includes('given up after 4 attempts: HTTP 401'),
        ),
      ).toBe(true);
      expect(logs.join('\n')).not.toMatch(/w0rd|hook%20user/);
    });

    it('gives up after three retries; a receiver that never answers does not stall the task', async () => {
      const receiver = await standIn(() => 'hang');
      const { service, logs } = await harness({ sandboxDelay: 100, callbackTimeout: 50, callbackBackoff: 10 });
      const id = taskIdOf(await service.submit('relight', alice, relight({ webhook_url: receiver.url })));
      const { seen } = await pollToEnd(service, 'relight', id);
      expect(seen.at(-1)).toBe('COMPLETED');
      await eventually(
        async () => ((await service.deliveries(id))[0]?.state === 'failed' ? true : undefined),
        'the first delivery to be given up',
      );
      expect((await service.deliveries(id))[0]).toMatchObject({
        attempts: 4,
        last_error: expect.stringMatching(/no answer within 50 ms/),
      });
      expect(logs.some((line) => line.includes('given up after 4 attempts'))).toBe(true);
    });

    // Found from outside: one user's 1,000 relights with a webhook_url to a receiver that never answers
    // had ~950 callbacks in flight at once, each a connection (the server's descriptors 25 → 992): under
    // the usual `ulimit -n 1024` every request of everyone would be 503 (EMFILE).
    it(`has at most ${CALLBACKS_IN_FLIGHT} callbacks in flight, however many tasks wait for theirs`, async () => {
      const receiver = await standIn(() => 'hang');
      const { service } = await harness({ sandboxDelay: 60_000, callbackTimeout: 60_000 });
      for (let i = 0; i < 100; i++)
        await service.submit(
          'relight',
          alice,
          relight({ image: 'https://example.org/a.png', webhook_url: receiver.url }),
        );
      await eventually(
        () => (receiver.requests.length >= CALLBACKS_IN_FLIGHT ? true : undefined),
        `${CALLBACKS_IN_FLIGHT} callbacks sent`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.requests.length).toBe(CALLBACKS_IN_FLIGHT);
    });

    // Found from outside: every scheduler round (one per submission and per callback sent) wrote every
    // sandbox task with a callback, due or not: 3,000 tasks of one user under --sandbox-delay 60s took a
    // core of the server whole (17.5 s of CPU for 2,000 submissions, then ~1 s per second).
    it('writes a waiting sandbox task only when its timeline has passed a state', async () => {
      const receiver = await standIn(() => ({ status: 200 }));
      const { service, updates } = await harness({ sandboxDelay: 60_000 });
      for (let i = 0; i < 50; i++)
        await service.submit(
          'relight',
          alice,
          relight({ image: 'https://example.org/a.png', webhook_url: receiver.url }),
        );
      await eventually(() => (receiver.requests.length >= 50 ? true : undefined), 'the first callback of each task');
      expect(updates()).toBeLessThanOrEqual(50);
    });

    it('a delivery cut short by a shutdown is made after the restart', async () => {
      let hang = true;
      const receiver = await standIn(() => (hang ? 'hang' : { status: 200 }));
      const first = await harness({ sandboxDelay: 60_000 });
      const id = taskIdOf(await first.service.submit('relight', alice, relight({ webhook_url: receiver.url })));
      await eventually(() => (receiver.requests.length === 1 ? true : undefined), 'the first attempt');
      await first.close();
      hang = false;
      const second = await harness({ sandboxDelay: 60_000 }, first.dataDir);
      await eventually(
        async () => ((await second.service.deliveries(id))[0]?.state === 'delivered' ? true : undefined),
        'the delivery after restart',
      );
      expect(receiver.requests).toHaveLength(2);
      expect(receiver.requests[1].headers['x-nodereg-delivery']).toBe(
        receiver.requests[0].headers['x-nodereg-delivery'],
      );
      expect((await second.service.deliveries(id))[0].attempts).toBe(1);
    });

    it('status changes passed while the server was down are called back after the restart, in order', async () => {
      const receiver = await standIn(() => ({ status: 200 }));
      const dataDir = tempDir('nodereg-proxy-');
      const first = await harness({ sandboxDelay: 200 }, dataDir);
      // stop before the task moves on; it walks on while the server is down
      const id = taskIdOf(await first.service.submit('relight', alice, relight({ webhook_url: receiver.url })));
      await first.close();
      await new Promise((resolve) => setTimeout(resolve, 250));
      const second = await harness({}, dataDir);
      await eventually(() => (receiver.requests.length >= 3 ? true : undefined), 'three callbacks');
      expect(receiver.requests.map((r) => (r.json as { status: string }).status)).toEqual([
        'CREATED',
        'IN_PROGRESS',
        'COMPLETED',
      ]);
      await eventually(
        async () => ((await second.service.deliveries(id)).every((d) => d.state === 'delivered') ? true : undefined),
        'all three recorded as delivered',
      );
    });

    it('callbacks wait until the server knows its address (a restart resumes before listen), so result URLs are absolute', async () => {
      const receiver = await standIn(() => ({ status: 200 }));
      let address = '';
      const { service } = await harness({ sandboxDelay: 100 }, undefined, () => address);
      const id = taskIdOf(await service.submit('relight', alice, relight({ webhook_url: receiver.url })));
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(receiver.requests).toHaveLength(0);
      address = 'http://127.0.0.1:5999';
      await eventually(
        () => (receiver.requests.length === 3 ? true : undefined),
        'the callbacks once the address is known',
      );
      expect(receiver.requests[2].json).toEqual({
        task_id: id,
        status: 'COMPLETED',
        generated: [expect.stringMatching(/^http:\/\/127\.0\.0\.1:5999\/proxy\/results\//)],
      });
    });

    it('a callback URL to a host the allow-list refuses is 400 naming the field', async () => {
      const { service } = await harness();
      for (const [kind, body, field] of [
        ['relight', relight({ webhook_url: 'http://10.0.0.1/hook' }), 'webhook_url'],
        ['skin-enhancer', skin({ webhook_url: 'https://example.com/hook' }), 'webhook_url'],
        ['video', video({ callback_url: 'http://192.168.0.1/cb' }), 'callback_url'],
      ] as const) {
        const error = await service.submit(kind, alice, body).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(HttpError);
        expect(error).toMatchObject({
          status: 400,
          code: 'invalid_request',
          details: [{ path: field, message: expect.stringMatching(/--callback-allow/) }],
        });
      }
      const narrow = await harness({ callbackAllow: ['hooks.example.test'] });
      await expect(
        narrow.service.submit('relight', alice, relight({ webhook_url: 'http://127.0.0.1:9/x' })),
      ).rejects.toMatchObject({ status: 400 });
    });
  });

  describe('forward mode', () => {
    /** A provider that accepts tasks and then reports them done on the second poll. */
    function provider() {
      const polls = new Map<string, number>();
      return (request: import('./stand-ins.js').Recorded): Answer => {
        if (request.method === 'POST' && request.path.endsWith('/image-relight'))
          return { status: 200, json: { data: { task_id: 'up-relight-1', generated: [], extra: 'kept' } } };
        if (request.method === 'POST' && request.path.endsWith('/skin-enhancer/flexible'))
          return { status: 200, json: { data: { task_id: 'up-skin-1', generated: [] } } };
        if (request.method === 'POST' && request.path.endsWith('/extend'))
          return { status: 200, json: { task_id: 'up-video-1', state: 'created', credits: 42, model: 'vidq2-pro' } };
        const count = (polls.get(request.path) ?? 0) + 1;
        polls.set(request.path, count);
        if (request.path.startsWith('/api/v1/ai/')) {
          const status = count >= 2 ? 'COMPLETED' : 'IN_PROGRESS';
          const taskId = request.path.split('/').pop();
          return {
            status: 200,
            json: {
              data: { task_id: taskId, status, generated: count >= 2 ? ['https://cdn.provider.test/r.png'] : [] },
            },
          };
        }
        if (request.path.startsWith('/vid/tasks/')) {
          return {
            status: 200,
            json: {
              task_id: 'up-video-1',
              state: count >= 2 ? 'success' : 'processing',
              credits: 42,
              creations: count >= 2 ? [{ id: 'cr-1', url: 'https://cdn.provider.test/v.mp4' }] : [],
            },
          };
        }
        return { status: 404, json: { message: 'unknown path' } };
      };
    }

    it('relays the validated body with defaults, without the callback URL, with the provider key; maps task ids', async () => {
      const upstream = await standIn(provider());
      const { service } = await harness({ imgUpstream: `${upstream.url}/api`, imgKey: 'img-secret' });
      expect(service.mode('relight')).toBe('forward');
      expect(service.mode('video')).toBe('sandbox');
      const reply = await service.submit(
        'relight',
        alice,
        relight({ prompt: '(warm light:1.2)', advanced_settings: { whites: 10 }, webhook_url: 'http://127.0.0.1:9/x' }),
      );
      const id = taskIdOf(reply);
      expect(id).not.toBe('up-relight-1');
      expect(reply).toEqual({ data: { task_id: id, generated: [], extra: 'kept' } });
      expect(upstream.requests[0]).toMatchObject({ method: 'POST', path: '/api/v1/ai/image-relight' });
      expect(upstream.requests[0].headers.authorization).toBe('Bearer img-secret');
      expect(upstream.requests[0].json).toEqual({
        image: PNG.toString('base64'),
        prompt: '(warm light:1.2)',
        change_background: true,
        interpolate_from_original: false,
        light_transfer_strength: 100,
        preserve_details: true,
        style: 'standard',
        advanced_settings: {
          whites: 10,
          blacks: 50,
          brightness: 50,
          contrast: 50,
          saturation: 50,
          engine: 'automatic',
          transfer_light_a: 'automatic',
          transfer_light_b: 'automatic',
          fixed_generation: false,
        },
      });
      const polled = (await service.status('relight', id, alice)) as { data: Record<string, unknown> };
      expect(upstream.requests.at(-1)).toMatchObject({ method: 'GET', path: '/api/v1/ai/image-relight/up-relight-1' });
      expect(upstream.requests.at(-1)!.headers.authorization).toBe('Bearer img-secret');
      expect(polled.data.task_id).toBe(id);
    });

    it('sends the key in another header when configured, bare', async () => {
      const upstream = await standIn(provider());
      const { service } = await harness({
        imgUpstream: `${upstream.url}/api`,
        imgKey: 'k-1',
        imgKeyHeader: 'X-Api-Key',
      });
      await service.submit('skin-enhancer', alice, skin({}));
      expect(upstream.requests[0].path).toBe('/api/v1/ai/skin-enhancer/flexible');
      expect(upstream.requests[0].headers['x-api-key']).toBe('k-1');
      expect(upstream.requests[0].headers.authorization).toBeUndefined();
      expect(upstream.requests[0].json).toEqual({
        image: PNG.toString('base64'),
        optimized_for: 'enhance_skin',
        sharpen: 0,
        smart_grain: 2,
      });
    });

    it('video: relays to /extend and polls /tasks/{id}/creations, ids mapped, then answers from the store once done', async () => {
      const upstream = await standIn(provider());
      const { service } = await harness({ vidUpstream: `${upstream.url}/vid`, vidKey: 'vid-secret' });
      // no callback: a task with one is also polled in the background, whose polls would land among this test's count
      const reply = await service.submit('video', alice, video({ duration: 3 }));
      expect(reply).toEqual({ task_id: expect.any(String), state: 'created', credits: 42, model: 'vidq2-pro' });
      expect(upstream.requests[0]).toMatchObject({
        path: '/vid/extend',
        json: { model: 'vidq2-pro', duration: 3, resolution: '720p' },
      });
      expect(upstream.requests[0].headers.authorization).toBe('Bearer vid-secret');
      const id = taskIdOf(reply);
      const { last } = await pollToEnd(service, 'video', id);
      expect(last).toEqual({
        task_id: id,
        state: 'success',
        credits: 42,
        creations: [{ id: 'cr-1', url: 'https://cdn.provider.test/v.mp4' }],
      });
      expect(upstream.requests.some((r) => r.path === '/vid/tasks/up-video-1/creations')).toBe(true);
      const before = upstream.requests.length;
      await service.status('video', id, alice);
      expect(upstream.requests.length).toBe(before);
    });

    it('polls the provider while a task with a callback is unfinished, calling back on each change', async () => {
      const upstream = await standIn(provider());
      const receiver = await standIn(() => ({ status: 200 }));
      const { service } = await harness({ imgUpstream: `${upstream.url}/api`, upstreamPollInterval: 20 });
      const id = taskIdOf(await service.submit('relight', alice, relight({ webhook_url: receiver.url })));
      await eventually(() => (receiver.requests.length >= 3 ? true : undefined), 'three callbacks');
      expect(receiver.requests.map((r) => (r.json as { status: string }).status)).toEqual([
        'CREATED',
        'IN_PROGRESS',
        'COMPLETED',
      ]);
      expect(receiver.requests[2].json).toMatchObject({ task_id: id, generated: ['https://cdn.provider.test/r.png'] });
      const polls = upstream.requests.filter((r) => r.method === 'GET').length;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(upstream.requests.filter((r) => r.method === 'GET').length).toBe(polls); // done: no more polling
    });

    it('polls a task the provider never finishes less often as it ages', async () => {
      const stuck = { status: 200, json: { data: { task_id: 'up-stuck', status: 'IN_PROGRESS', generated: [] } } };
      const upstream = await standIn(() => stuck);
      const receiver = await standIn(() => ({ status: 200 }));
      const { service } = await harness({ imgUpstream: `${upstream.url}/api`, upstreamPollInterval: 10 });
      await service.submit('relight', alice, relight({ webhook_url: receiver.url }));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const polls = upstream.requests.filter((r) => r.method === 'GET').length;
      // Every 10 ms for 1 s is ~100 polls; a tenth of the task's age apart (at most 300 ms) is ~33.
      expect(polls).toBeGreaterThanOrEqual(5);
      expect(polls).toBeLessThan(60);
    });

    it('a provider 4xx keeps its status in our error shape', async () => {
      let answer: Answer = { status: 200 };
      const upstream = await standIn(() => answer);
      const { service } = await harness({ imgUpstream: upstream.url });
      for (const [given, status, code, message] of [
        [{ status: 400, json: { message: 'image too small' } }, 400, 'invalid_request', /image too small/],
        [{ status: 404, json: { detail: 'no such model' } }, 404, 'not_found', /no such model/],
        [{ status: 422, json: { error: { message: 'bad prompt' } } }, 422, 'invalid_request', /bad prompt/],
        [
          { status: 429, json: { message: 'slow down' }, headers: { 'retry-after': '7' } },
          429,
          'rate_limited',
          /slow down/,
        ],
      ] as const) {
        answer = given as Answer;
        const error = await service.submit('relight', alice, relight({})).catch((e: unknown) => e);
        expect(error, JSON.stringify(given)).toBeInstanceOf(UpstreamRejection);
        const rejection = error as UpstreamRejection;
        expect(rejection.status).toBe(status);
        expect(rejection.body.error).toBe(code);
        expect(rejection.body.message).toMatch(message);
        if (status === 429) expect(rejection.retryAfter).toBe('7');
      }
    });

    it('a provider failure is 502 upstream_error', async () => {
      let answer: Answer = { status: 200 };
      const upstream = await standIn(() => answer);
      const { service } = await harness({ imgUpstream: upstream.url });
      for (const [given, code, message] of [
        [{ status: 500, text: 'boom' }, 'upstream_error', /HTTP 500/],
        [{ status: 503, json: {} }, 'upstream_error', /HTTP 503/],
        [{ status: 401, json: { message: 'bad key' } }, 'upstream_error', /refused the registry's key \(HTTP 401\)/],
        [{ status: 403, json: {} }, 'upstream_error', /HTTP 403/],
        [{ status: 302, headers: { location: 'http://127.0.0.1:9/' } }, 'upstream_error', /HTTP 302/],
        [{ status: 200, text: 'not json' }, 'upstream_error', /not JSON/],
        [{ status: 200, json: { data: {} } }, 'upstream_error', /without a task id/],
      ] as const) {
        answer = given as Answer;
        const error = await service.submit('relight', alice, relight({})).catch((e: unknown) => e);
        expect(error, JSON.stringify(given)).toBeInstanceOf(HttpError);
        expect(error).toMatchObject({ status: 502, code, message: expect.stringMatching(message) });
      }
    });

    it('a provider that does not answer in time is 504 upstream_timeout', async () => {
      const upstream = await standIn(() => 'hang');
      const { service } = await harness({ vidUpstream: upstream.url, upstreamTimeout: 100 });
      await expect(service.submit('video', alice, video({}))).rejects.toMatchObject({
        status: 504,
        code: 'upstream_timeout',
      });
    });

    it('a provider that cannot be reached is 502', async () => {
      const upstream = await standIn(() => ({ status: 200 }));
      const url = upstream.url;
      await upstream.close();
      const { service } = await harness({ imgUpstream: url });
      await expect(service.submit('relight', alice, relight({}))).rejects.toMatchObject({
        status: 502,
        code: 'upstream_error',
        message: expect.stringMatching(/cannot reach/),
      });
    });

    it('a failing status poll maps the same way; a provider 404 on a poll is 404', async () => {
      let pollAnswer: Answer = { status: 500, json: {} };
      const upstream = await standIn((request) =>
        request.method === 'POST' ? { status: 200, json: { data: { task_id: 'u1' } } } : pollAnswer,
      );
      const { service } = await harness({ imgUpstream: upstream.url });
      const id = taskIdOf(await service.submit('relight', alice, relight({})));
      await expect(service.status('relight', id, alice)).rejects.toMatchObject({ status: 502 });
      pollAnswer = { status: 404, json: { message: 'expired' } };
      await expect(service.status('relight', id, alice)).rejects.toMatchObject({ status: 404 });
      await expect(service.status('relight', id, bob)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    });
  });
});
