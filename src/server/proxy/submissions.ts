// Submissions: a task checked, then answered by the sandbox or forwarded to its provider.
import { randomBytes, randomUUID } from 'node:crypto';
import { videoCredits, withoutRequestContent } from '../../contract/proxy.js';
import { badRequest, HttpError } from '../errors.js';
import type { Principal } from '../route.js';
import { bodySource, relayedBody, type Prepared } from './bodies.js';
import { RESULTS_PREFIX, type ProxyDeps, type TaskBase, type TaskBodies, type View } from './deps.js';
import { KINDS, statusOf, upstreamSubmitPath, type TaskKind } from './kinds.js';
import { callbacksOf, normaliseView, sandboxView } from './polling.js';
import { placeholderVideo, type SandboxSource } from './sandbox.js';
import { wake } from './scheduler.js';
import type { QuotaRefusal, ResultQuota, ResultRow, TaskRow } from './store.js';
import { callUpstream, upstreamTaskId, upstreamView } from './upstream.js';

const randomName = (ext: string) => randomBytes(24).toString('base64url') + ext;

/** What the sandbox makes the result of: the image given, or for video its `video_url` or a placeholder. */
function sandboxSource<K extends TaskKind>(
  kind: K,
  body: TaskBodies[K],
  taskId: string,
  prepared: Prepared | undefined,
): SandboxSource {
  const source = prepared ? prepared.source : bodySource(kind, body);
  return source ?? { kind: 'bytes', bytes: placeholderVideo(taskId), contentType: 'video/mp4', ext: '.mp4' };
}

/**
 * Result files count against a quota per user and one in all until they expire: a submission that
 * would pass either is 429, with Retry-After when the first kept file expires. The store decides, as
 * it keeps the result (racing submissions, on any instance, cannot all pass).
 */
const quotaOf = ({ options }: ProxyDeps): ResultQuota => ({
  user: options.sandboxQuotaUser,
  total: options.sandboxQuotaTotal,
});

function overQuota(deps: ProxyDeps, { scope, stored }: QuotaRefusal, bytes: number, now: number): HttpError {
  const { options } = deps;
  const whose = scope === 'user' ? 'your' : "this registry's";
  const seconds = Math.max(1, Math.ceil(((stored.first_expiry ?? now + options.resultTtl) - now) / 1000));
  return new HttpError(
    'rate_limited',
    `the sandbox keeps ${stored.bytes} bytes of results for ${whose} tasks; this one (${bytes} bytes) would pass the quota of ${quotaOf(deps)[scope]} bytes. Results expire ${Math.round(options.resultTtl / 3_600_000)} h after their task`,
    undefined,
    'retry once earlier results have expired, or send a smaller image',
    { 'Retry-After': String(seconds) },
  );
}

/** The result row of a sandbox task, its file written first: a result the store keeps always has its file. */
async function sandboxResult(deps: ProxyDeps, source: SandboxSource, base: TaskBase): Promise<ResultRow> {
  const result: ResultRow = {
    name: '',
    task_id: base.id,
    position: 0,
    creation_id: randomUUID(),
    url: null,
    file: null,
    content_type: null,
    expires_at: base.created_at + deps.options.resultTtl,
    size: 0,
  };
  if (source.kind === 'url') {
    result.name = randomName('');
    result.url = source.url;
  } else if (source.kind === 'bytes') {
    result.name = randomName(source.ext);
    result.file = result.name;
    result.content_type = source.contentType;
    result.size = source.bytes.length;
    // Removed again if the store refuses the result.
    await deps.ctx.archives.write(RESULTS_PREFIX + result.name, source.bytes, source.contentType);
  }
  return result;
}

async function submitSandbox<K extends TaskKind>(
  deps: ProxyDeps,
  kind: K,
  body: TaskBodies[K],
  base: TaskBase,
  prepared: Prepared | undefined,
): Promise<View> {
  const source = sandboxSource(kind, body, base.id, prepared);
  const result = await sandboxResult(deps, source, base);
  const video = kind === 'video' ? (body as TaskBodies['video']) : undefined;
  const task: TaskRow = {
    ...base,
    mode: 'sandbox',
    upstream_id: null,
    delay_ms: deps.options.sandboxDelay,
    outcome: source.kind === 'invalid' ? 'failed' : 'ok',
    status: KINDS[kind].states[0],
    view: JSON.stringify(source.kind === 'invalid' ? { error: source.reason } : {}),
    credits: video ? videoCredits(video.model, video.resolution, video.duration) : null,
    next_poll_at: 0,
  };
  const [callback] = callbacksOf(task, [sandboxView(deps, task, 0, [])]);
  const refused = await deps.store.createTask(
    task,
    source.kind !== 'invalid' ? result : undefined,
    callback && { ...callback, task_id: task.id, next_at: base.created_at },
    result.file ? quotaOf(deps) : undefined,
  );
  if (refused) {
    await deps.ctx.archives.remove(RESULTS_PREFIX + result.name);
    throw overQuota(deps, refused, result.size, base.created_at);
  }
  if (!video) return { data: { task_id: task.id, status: task.status, generated: [] } };
  const { callback_url: _, ...echo } = video;
  return withoutRequestContent({
    ...echo,
    credits: task.credits,
    state: task.status,
    task_id: task.id,
    created_at: new Date(task.created_at).toISOString(),
  });
}

async function submitForward<K extends TaskKind>(
  deps: ProxyDeps,
  kind: K,
  body: TaskBodies[K],
  base: TaskBase,
  prepared: Prepared | undefined,
): Promise<View> {
  const info = KINDS[kind];
  const relayed = prepared?.relay ?? relayedBody(kind, body as Record<string, unknown>);
  const answer = await callUpstream(
    deps.upstreams[info.provider]!,
    'POST',
    upstreamSubmitPath(kind),
    relayed,
    deps.closing.signal,
  );
  const upstreamId = upstreamTaskId(answer, info.family);
  const raw = upstreamView(answer, info.family);
  const view = normaliseView(
    kind,
    info.family === 'image' ? raw : { task_id: raw.task_id, state: raw.state, credits: raw.credits },
    base.id,
  );
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
  await deps.store.createTask(task, undefined, callback && { ...callback, task_id: task.id, next_at: base.created_at });
  return info.family === 'image'
    ? { ...(answer as View), data: { ...raw, task_id: base.id } }
    : withoutRequestContent({ ...raw, task_id: base.id });
}

/**
 * A submission: its checked body, or (from the route) the body prepared off the event loop, whose
 * content is only in `prepared`.
 */
export async function submit<K extends TaskKind>(
  deps: ProxyDeps,
  kind: K,
  principal: Principal,
  body: TaskBodies[K],
  prepared?: Prepared<K>,
): Promise<View> {
  const field = KINDS[kind].callbackField;
  const callbackUrl = (body as Record<string, unknown>)[field] as string | undefined;
  if (callbackUrl !== undefined && !deps.allowed(callbackUrl)) {
    const message = `callbacks to ${new URL(callbackUrl).hostname} are not allowed by this registry (serve --callback-allow)`;
    throw badRequest(`invalid request: ${field}: ${message}`, [{ path: field, message }]);
  }
  const now = Date.now();
  const base = {
    id: randomUUID(),
    kind,
    user_id: principal.userId,
    callback_url: callbackUrl ?? null,
    created_at: now,
    updated_at: now,
  };
  const reply = deps.upstreams[KINDS[kind].provider]
    ? await submitForward(deps, kind, body, base, prepared)
    : await submitSandbox(deps, kind, body, base, prepared);
  wake(deps);
  return reply;
}
