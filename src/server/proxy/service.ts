// The AI proxy (DESIGN.md §4): submissions in sandbox or forward mode, status polls, sandbox result
// files, and one scheduler that advances watched tasks and delivers their callbacks.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { videoCredits, withoutRequestContent, type RelightBody, type SkinEnhancerBody, type VideoExtendBody } from '../../contract/proxy.js';
import { requestedRange } from '../archives/range.js';
import type { ByteRange } from '../archives/storage.js';
import type { ServerContext } from '../context.js';
import { badRequest, HttpError, notFound } from '../errors.js';
import type { Principal } from '../route.js';
import { withoutUserInfo } from '../../shared/url.js';
import { sendCallback, type DeliveryOutcome } from './callbacks.js';
import { isTerminal, KINDS, pollShape, statusOf, upstreamStatusPath, upstreamSubmitPath, type Provider, type TaskKind } from './kinds.js';
import { CALLBACK_RETRIES, callbackHostAllowed, pollSpacing, resolveProxyOptions } from './options.js';
import { bodySource, relayedBody, type Prepared } from './bodies.js';
import { placeholderVideo, sandboxNextChange, sandboxStep, type SandboxSource } from './sandbox.js';
import type { DeliveryRow, QuotaRefusal, ResultRow, TaskDecision, TaskRow } from './store.js';
import { callUpstream, upstreamTaskId, upstreamView, type Upstream } from './upstream.js';

export interface TaskBodies {
  relight: z.output<typeof RelightBody>;
  'skin-enhancer': z.output<typeof SkinEnhancerBody>;
  video: z.output<typeof VideoExtendBody>;
}

type View = Record<string, unknown>;
type TaskBase = Omit<TaskRow, 'mode' | 'upstream_id' | 'delay_ms' | 'outcome' | 'status' | 'view' | 'credits' | 'next_poll_at'>;

/** Forward tasks with a callback are polled for at most this long. */
const WATCH_FOR_MS = 24 * 60 * 60 * 1000;
const PURGE_EVERY_MS = 60 * 60 * 1000;
/**
 * The longest the scheduler sleeps; it re-reads the store when it wakes. With a shared database this is
 * also how soon an instance takes up work another one left (a delivery whose lease ran out).
 */
const MAX_SLEEP_MS = 30_000;
/**
 * Callbacks being sent at once, at most: each holds a connection for up to --callback-timeout, and one
 * user's tasks could otherwise hold as many as they have (1,000 tasks: ~950 connections).
 */
export const CALLBACKS_IN_FLIGHT = 20;
/** Where sandbox result files live in the archive storage (no publisher id starts with "_"). */
export const RESULTS_PREFIX = '_proxy-results/';

export type ProxyService = ReturnType<typeof createProxyService>;

export function createProxyService(ctx: Pick<ServerContext, 'tasks' | 'archives' | 'options' | 'keys' | 'publicUrl' | 'log'>) {
  const options = resolveProxyOptions(ctx.options.proxy, ctx.options.host);
  const store = ctx.tasks;
  const allowed = callbackHostAllowed(options.callbackAllow);
  const closing = new AbortController();
  const userAgent = `nodereg/${ctx.options.version ?? '0.0.0'}`;
  /** This instance, as the owner of the deliveries it leases. */
  const owner = randomUUID();
  /**
   * How long a delivery stays leased: longer than one attempt can take (it is cut at the callback
   * timeout), so two instances never deliver it at once; a dead instance's lease runs out after it.
   */
  const leaseMs = 2 * options.callbackTimeout + 10_000;

  const upstreams: Record<Provider, Upstream | undefined> = {
    img: options.imgUpstream
      ? { baseUrl: options.imgUpstream, key: options.imgKey, keyHeader: options.imgKeyHeader, timeoutMs: options.upstreamTimeout, keyEnv: 'NODEREG_IMG_API_KEY' }
      : undefined,
    vid: options.vidUpstream
      ? { baseUrl: options.vidUpstream, key: options.vidKey, keyHeader: options.vidKeyHeader, timeoutMs: options.upstreamTimeout, keyEnv: 'NODEREG_VID_API_KEY' }
      : undefined,
  };

  // ---------- views ----------

  const resultUrl = (row: ResultRow) => row.url ?? `${ctx.publicUrl()}/proxy/results/${row.name}`;

  /** A sandbox task's view at a step of its timeline; results appear only in the final, successful state. */
  function sandboxView(task: TaskRow, step: number, stored: ResultRow[]): View {
    const info = KINDS[task.kind];
    const last = step >= info.states.length - 1;
    const failed = last && task.outcome === 'failed';
    const status = failed ? info.failed : info.states[step];
    const results = last && !failed ? stored : [];
    const error = failed ? { error: (JSON.parse(task.view) as { error?: string }).error } : {};
    if (info.family === 'image') return { task_id: task.id, status, generated: results.map(resultUrl), ...error };
    return {
      task_id: task.id,
      state: status,
      credits: task.credits ?? 0,
      creations: results.map((row) => ({ id: row.creation_id, url: resultUrl(row) })),
      ...error,
    };
  }

  const stepOf = (task: TaskRow, now: number) => sandboxStep(KINDS[task.kind].states.length, task.created_at, task.delay_ms, now);
  /** The step of its timeline a sandbox task's stored status is at. */
  const storedStep = (task: TaskRow) => {
    const info = KINDS[task.kind];
    return task.status === info.failed ? info.states.length - 1 : Math.max(0, info.states.indexOf(task.status));
  };

  /** The callbacks of a task for these views (none without a callback URL). */
  const callbacksOf = (task: TaskRow, views: View[]) =>
    task.callback_url ? views.map((view) => ({ id: randomUUID(), url: task.callback_url!, body: JSON.stringify(view) })) : [];

  /**
   * Brings a sandbox task's stored status up to its timeline, queueing one callback per state passed.
   * Under the task's lock: of instances catching up at once, one queues each callback.
   */
  function catchUpSandbox(taskId: string, now: number): Promise<View> {
    return store.update(taskId, now, (task, results): TaskDecision<View> => {
      const seen = storedStep(task);
      // Never backwards: another instance, whose clock read came later, may have moved it further.
      const step = Math.max(seen, stepOf(task, now));
      const passed: View[] = [];
      for (let s = seen + 1; s <= step; s++) passed.push(sandboxView(task, s, results));
      const view = sandboxView(task, step, results);
      return {
        observe: step > seen ? { status: statusOf(task.kind, view), view: task.view } : undefined,
        callbacks: callbacksOf(task, passed),
        value: view,
      };
    });
  }

  /** Records the provider's latest view of a task; a changed status queues a callback. */
  async function observeForward(taskId: string, view: View, now: number): Promise<void> {
    await store.update(taskId, now, (task): TaskDecision<void> => {
      const status = statusOf(task.kind, view);
      const json = JSON.stringify(view);
      if (status === task.status && json === task.view) return { callbacks: [], value: undefined };
      return { observe: { status, view: json }, callbacks: status !== task.status ? callbacksOf(task, [view]) : [], value: undefined };
    });
  }

  /** The provider's task view in our poll shape, with list fields present and our task id. */
  function normaliseView(kind: TaskKind, raw: View, taskId: string): View {
    if (KINDS[kind].family === 'image') {
      return { ...raw, task_id: taskId, status: typeof raw.status === 'string' ? raw.status : 'CREATED', generated: Array.isArray(raw.generated) ? raw.generated : [] };
    }
    return {
      ...raw,
      task_id: taskId,
      state: typeof raw.state === 'string' ? raw.state : 'created',
      credits: typeof raw.credits === 'number' ? raw.credits : 0,
      creations: Array.isArray(raw.creations) ? raw.creations : [],
    };
  }

  async function pollUpstream(task: TaskRow): Promise<View> {
    const upstream = upstreams[KINDS[task.kind].provider];
    if (!upstream) {
      throw new HttpError('upstream_error', `task ${task.id} was sent to an AI provider this registry no longer forwards to`);
    }
    const answer = await callUpstream(upstream, 'GET', upstreamStatusPath(task.kind, task.upstream_id!), undefined, closing.signal);
    const view = normaliseView(task.kind, upstreamView(answer, KINDS[task.kind].family), task.id);
    await observeForward(task.id, view, Date.now());
    return view;
  }

  // ---------- submissions ----------

  const randomName = (ext: string) => randomBytes(24).toString('base64url') + ext;

  /** What the sandbox makes the result of: the image given, or for video its `video_url` or a placeholder. */
  function sandboxSource<K extends TaskKind>(kind: K, body: TaskBodies[K], taskId: string, prepared: Prepared | undefined): SandboxSource {
    const source = prepared ? prepared.source : bodySource(kind, body);
    return source ?? { kind: 'bytes', bytes: placeholderVideo(taskId), contentType: 'video/mp4', ext: '.mp4' };
  }

  /**
   * Result files count against a quota per user and one in all until they expire: a submission that
   * would pass either is 429, with Retry-After when the first kept file expires. The store decides, as
   * it keeps the result (racing submissions, on any instance, cannot all pass).
   */
  const quota = { user: options.sandboxQuotaUser, total: options.sandboxQuotaTotal };
  function overQuota({ scope, stored }: QuotaRefusal, bytes: number, now: number): HttpError {
    const whose = scope === 'user' ? 'your' : "this registry's";
    const seconds = Math.max(1, Math.ceil(((stored.first_expiry ?? now + options.resultTtl) - now) / 1000));
    return new HttpError(
      'rate_limited',
      `the sandbox keeps ${stored.bytes} bytes of results for ${whose} tasks; this one (${bytes} bytes) would pass the quota of ${quota[scope]} bytes. Results expire ${Math.round(options.resultTtl / 3_600_000)} h after their task`,
      undefined,
      'retry once earlier results have expired, or send a smaller image',
      { 'Retry-After': String(seconds) },
    );
  }

  async function submitSandbox<K extends TaskKind>(kind: K, body: TaskBodies[K], base: TaskBase, prepared: Prepared | undefined): Promise<View> {
    const info = KINDS[kind];
    const source = sandboxSource(kind, body, base.id, prepared);
    const result: ResultRow = {
      name: '', task_id: base.id, position: 0, creation_id: randomUUID(), url: null, file: null, content_type: null,
      expires_at: base.created_at + options.resultTtl, size: 0,
    };
    if (source.kind === 'url') {
      result.name = randomName('');
      result.url = source.url;
    } else if (source.kind === 'bytes') {
      result.name = randomName(source.ext);
      result.file = result.name;
      result.content_type = source.contentType;
      result.size = source.bytes.length;
      // Written first, so that a result the store keeps always has its file; removed if it is refused.
      await ctx.archives.write(RESULTS_PREFIX + result.name, source.bytes, source.contentType);
    }
    const video = kind === 'video' ? (body as TaskBodies['video']) : undefined;
    const task: TaskRow = {
      ...base,
      mode: 'sandbox',
      upstream_id: null,
      delay_ms: options.sandboxDelay,
      outcome: source.kind === 'invalid' ? 'failed' : 'ok',
      status: info.states[0],
      view: JSON.stringify(source.kind === 'invalid' ? { error: source.reason } : {}),
      credits: video ? videoCredits(video.model, video.resolution, video.duration) : null,
      next_poll_at: 0,
    };
    const [callback] = callbacksOf(task, [sandboxView(task, 0, [])]);
    const refused = await store.createTask(
      task,
      source.kind !== 'invalid' ? result : undefined,
      callback && { ...callback, task_id: task.id, next_at: base.created_at },
      result.file ? quota : undefined,
    );
    if (refused) {
      await ctx.archives.remove(RESULTS_PREFIX + result.name);
      throw overQuota(refused, result.size, base.created_at);
    }
    if (!video) return { data: { task_id: task.id, status: task.status, generated: [] } };
    const { callback_url: _, ...echo } = video;
    return withoutRequestContent({ ...echo, credits: task.credits, state: task.status, task_id: task.id, created_at: new Date(task.created_at).toISOString() });
  }

  async function submitForward<K extends TaskKind>(kind: K, body: TaskBodies[K], base: TaskBase, prepared: Prepared | undefined): Promise<View> {
    const info = KINDS[kind];
    const relayed = prepared?.relay ?? relayedBody(kind, body as Record<string, unknown>);
    const answer = await callUpstream(upstreams[info.provider]!, 'POST', upstreamSubmitPath(kind), relayed, closing.signal);
    const upstreamId = upstreamTaskId(answer, info.family);
    const raw = upstreamView(answer, info.family);
    const view = normaliseView(kind, info.family === 'image' ? raw : { task_id: raw.task_id, state: raw.state, credits: raw.credits }, base.id);
    const task: TaskRow = {
      ...base,
      mode: 'forward',
      upstream_id: upstreamId,
      delay_ms: 0,
      outcome: 'ok',
      status: statusOf(kind, view),
      view: JSON.stringify(view),
      credits: typeof raw.credits === 'number' ? raw.credits : null,
      next_poll_at: 0,
    };
    const [callback] = callbacksOf(task, [view]);
    await store.createTask(task, undefined, callback && { ...callback, task_id: task.id, next_at: base.created_at });
    return info.family === 'image' ? { ...(answer as View), data: { ...raw, task_id: base.id } } : withoutRequestContent({ ...raw, task_id: base.id });
  }

  /**
   * A submission: its checked body, or (from the route) the body prepared off the event loop, whose
   * content is only in `prepared`.
   */
  async function submit<K extends TaskKind>(kind: K, principal: Principal, body: TaskBodies[K], prepared?: Prepared<K>): Promise<View> {
    const field = KINDS[kind].callbackField;
    const callbackUrl = (body as Record<string, unknown>)[field] as string | undefined;
    if (callbackUrl !== undefined && !allowed(callbackUrl)) {
      const message = `callbacks to ${new URL(callbackUrl).hostname} are not allowed by this registry (serve --callback-allow)`;
      throw badRequest(`invalid request: ${field}: ${message}`, [{ path: field, message }]);
    }
    const now = Date.now();
    const base = { id: randomUUID(), kind, user_id: principal.userId, callback_url: callbackUrl ?? null, created_at: now, updated_at: now };
    const reply = upstreams[KINDS[kind].provider] ? await submitForward(kind, body, base, prepared) : await submitSandbox(kind, body, base, prepared);
    wake();
    return reply;
  }

  // ---------- polls and results ----------

  /** A task of this kind that the principal may see (its creator, or an admin); anyone else gets 404. */
  async function visibleTask(kind: TaskKind, taskId: string, principal: Principal): Promise<TaskRow> {
    const task = await store.task(taskId);
    if (!task || task.kind !== kind || (!principal.admin && task.user_id !== principal.userId)) {
      throw notFound(`no ${kind} task ${taskId}`);
    }
    return task;
  }

  async function status(kind: TaskKind, taskId: string, principal: Principal): Promise<View> {
    const task = await visibleTask(kind, taskId, principal);
    if (task.mode === 'sandbox') {
      const view = await catchUpSandbox(task.id, Date.now());
      wake();
      return pollShape(kind, view);
    }
    if (isTerminal(task.status)) return pollShape(kind, JSON.parse(task.view) as View);
    const view = await pollUpstream(task);
    wake();
    return pollShape(kind, view);
  }

  /**
   * The file behind a result URL, from the archive storage, or the one byte range a `Range` header asks
   * (when the size is recorded); 404 when unknown or expired.
   */
  async function resultFile(name: string, rangeHeader?: string): Promise<{ stream: Readable; contentType: string; size: number; range?: ByteRange }> {
    const row = await store.result(name);
    if (!row || !row.file) throw notFound(row ? 'this result has expired (results are kept for 24 hours)' : 'no such result');
    if (row.expires_at <= Date.now()) throw notFound('this result has expired (results are kept for 24 hours)');
    const range = row.size ? requestedRange(rangeHeader, row.size) : undefined;
    const file = await ctx.archives.open(RESULTS_PREFIX + row.file, range);
    if (!file) throw notFound('this result is no longer stored');
    return { stream: file.stream, contentType: row.content_type ?? 'application/octet-stream', size: file.size, range };
  }

  /** Removes expired result files; every instance may, removing twice is harmless. */
  async function purgeExpired(): Promise<void> {
    for (const row of await store.expiredResults(Date.now())) {
      await ctx.archives.remove(RESULTS_PREFIX + row.file!);
      await store.forgetFile(row.name);
    }
  }

  // ---------- the scheduler: sandbox timelines, provider polls, callback deliveries ----------

  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let ticking: Promise<void> | undefined;
  let again = false;
  const inflight = new Map<string, Promise<void>>();

  function run(key: string, work: () => Promise<void>): void {
    const promise = work()
      .catch((error) => ctx.log(`proxy: ${key}: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        inflight.delete(key);
        wake();
      });
    inflight.set(key, promise);
  }

  async function deliver(delivery: DeliveryRow): Promise<void> {
    const permitted = allowed(delivery.url);
    const outcome: DeliveryOutcome = permitted
      ? await sendCallback({
          url: delivery.url, body: delivery.body, deliveryId: delivery.id, key: ctx.keys.callback,
          timeoutMs: options.callbackTimeout, userAgent, closing: closing.signal,
        })
      : { ok: false, error: 'the host is not allowed by --callback-allow' };
    // On shutdown the attempt does not count: the lease goes, and it is made again (here after a
    // restart, or at once by another instance).
    if (closing.signal.aborted) return store.release(delivery.id, owner);
    const attempts = delivery.attempts + 1;
    const now = Date.now();
    if (outcome.ok) return store.settle(delivery.id, owner, 'delivered', attempts, now, null, now);
    if (!permitted || attempts > CALLBACK_RETRIES) {
      ctx.log(`proxy: callback ${delivery.id} for task ${delivery.task_id} to ${withoutUserInfo(delivery.url)} given up after ${attempts} attempts: ${outcome.error}`);
      return store.settle(delivery.id, owner, 'failed', attempts, now, outcome.error, now);
    }
    await store.settle(delivery.id, owner, 'pending', attempts, now + options.callbackBackoff * 2 ** (attempts - 1), outcome.error, now);
  }

  /** One round: sandbox timelines caught up, due polls and deliveries claimed and started. */
  async function round(): Promise<number> {
    const now = Date.now();
    let next = now + MAX_SLEEP_MS;
    for (const task of await store.watched(now - WATCH_FOR_MS)) {
      if (task.mode === 'sandbox') {
        // Only a task whose timeline passed a state is written: a round comes with every submission and
        // every callback sent, and wrote each waiting task again (3,000 of one user took a core).
        if (stepOf(task, now) > storedStep(task)) await catchUpSandbox(task.id, now);
        const at = sandboxNextChange(KINDS[task.kind].states.length, task.created_at, task.delay_ms, now);
        if (at !== undefined) next = Math.min(next, at);
      } else if (upstreams[KINDS[task.kind].provider]) {
        next = Math.min(next, Math.max(task.next_poll_at, now + 1));
      }
    }
    // A poll claimed is not made again by anyone before the poll interval has passed; then an older
    // task's next poll is put off further (pollSpacing).
    for (const task of await store.claimPolls(now - WATCH_FOR_MS, now, options.upstreamPollInterval)) {
      if (!upstreams[KINDS[task.kind].provider]) continue;
      const at = now + pollSpacing(now - task.created_at, options.upstreamPollInterval);
      run(`poll:${task.id}`, () => store.deferPoll(task.id, at).then(() => pollUpstream(task)).then(() => {}));
      next = Math.min(next, at);
    }
    // Only as many as there is room for: each one that ends wakes the scheduler, which claims the next.
    const room = CALLBACKS_IN_FLIGHT - [...inflight.keys()].filter((key) => key.startsWith('delivery:')).length;
    if (room > 0) for (const delivery of await store.claimDeliveries(now, now + leaseMs, owner, room)) run(`delivery:${delivery.id}`, () => deliver(delivery));
    const due = await store.nextDeliveryAt();
    if (due !== undefined) next = Math.min(next, Math.max(due, now + 1));
    return next;
  }

  function tick(): void {
    timer = undefined;
    if (closed) return;
    if (!ctx.publicUrl()) {
      // Not listening yet: result URLs in callbacks need the address; resume once it is known.
      timer = setTimeout(tick, 50);
      timer.unref();
      return;
    }
    // One round at a time; a wake during a round runs another right after it.
    if (ticking) {
      again = true;
      return;
    }
    ticking = round()
      .catch((error) => {
        ctx.log(`proxy: scheduler: ${error instanceof Error ? error.message : String(error)}`);
        return Date.now() + 1_000;
      })
      .then((next) => {
        ticking = undefined;
        if (closed) return;
        if (again) {
          again = false;
          return wake();
        }
        if (timer) return;
        timer = setTimeout(tick, Math.min(Math.max(next - Date.now(), 0), MAX_SLEEP_MS));
        timer.unref();
      });
  }

  /** Runs the scheduler soon: after a submission, a poll, or a delivery. */
  function wake(): void {
    if (closed) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(tick, 0);
    timer.unref();
  }

  const purge = () => purgeExpired().catch((error) => ctx.log(`proxy: purge: ${error instanceof Error ? error.message : String(error)}`));
  let purging = purge();
  const purger = setInterval(() => (purging = purge()), PURGE_EVERY_MS);
  purger.unref();
  // Resume what a previous run left: pending deliveries and unfinished watched tasks.
  wake();

  return {
    options,
    submit,
    status,
    resultFile,
    /** Deliveries of a task, oldest first (tests and diagnostics). */
    deliveries: (taskId: string) => store.deliveries(taskId),
    mode: (kind: TaskKind) => (upstreams[KINDS[kind].provider] ? 'forward' : 'sandbox'),
    /** Stops the scheduler and waits for in-flight work; pending deliveries stay stored for the next start. */
    async close(): Promise<void> {
      closed = true;
      if (timer) clearTimeout(timer);
      clearInterval(purger);
      closing.abort();
      await ticking;
      await Promise.allSettled([...inflight.values(), purging]);
    },
  };
}
