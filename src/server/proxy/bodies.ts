// A submission's body to the AI proxy may be 25 MiB of JSON (JSON_BODY_MAX): decoding, parsing and checking it,
// then reading its image (sandbox) or serialising it for the provider (forward), held the event loop long enough
// per body to stall every other request. A large body is prepared in a worker thread (DESIGN.md §3: expensive
// checks run off the event loop); the event loop gets back only the small fields and the bytes to store or send,
// handed over without a copy.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { withoutRequestContent } from '../../contract/proxy.js';
import { jsonErrorOffset } from '../json-shape.js';
import { invalidRequest, malformedJson } from '../route.js';
import { KINDS, type TaskKind } from './kinds.js';
import { readSource, type SandboxSource } from './sandbox.js';
import type { TaskBodies } from './deps.js';

/** A checked submission, ready for the service. */
export interface Prepared<K extends TaskKind = TaskKind> {
  /** The body without its content (images, video, payload): what the event loop still needs of it. */
  body: TaskBodies[K];
  /** Sandbox: the result's source (none for a video without one: a placeholder is made). */
  source?: SandboxSource;
  /** Forward: the body to relay, serialised. */
  relay?: Uint8Array;
}

/** `malformed`: where the body stops being JSON (`jsonErrorOffset`) and its length, never its bytes. */
type Outcome =
  | { prepared: Prepared }
  | { malformed: { at?: number; length: number } }
  | { issues: { path: PropertyKey[]; message: string }[] };

/** Bodies up to this size are prepared on the event loop: a round trip to the worker would cost more. */
const INLINE_MAX = 256 * 1024;

/** The body the provider gets: ours without the callback URL (we call back ourselves). */
export function relayedBody(kind: TaskKind, body: Record<string, unknown>): Record<string, unknown> {
  const { [KINDS[kind].callbackField]: _, ...relayed } = body;
  return relayed;
}

/** Where a sandbox result comes from: the image, or the video given; undefined for a video without one. */
export function bodySource(kind: TaskKind, body: TaskBodies[TaskKind]): SandboxSource | undefined {
  if (kind !== 'video') return readSource((body as TaskBodies['relight']).image, 'image');
  const video = body as TaskBodies['video'];
  return video.video_url === undefined ? undefined : readSource(video.video_url, 'video');
}

/** Parses, checks and prepares one body (in the worker, or inline when small). */
export function prepareBody(kind: TaskKind, raw: Uint8Array, forward: boolean): Outcome {
  let json: unknown;
  try {
    json =
      raw.length === 0 ? undefined : JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8'));
  } catch {
    return { malformed: { at: jsonErrorOffset(raw), length: raw.length } };
  }
  const parsed = KINDS[kind].submit.body.safeParse(json);
  if (!parsed.success) return { issues: parsed.error.issues.map(({ path, message }) => ({ path, message })) };
  const full = parsed.data as TaskBodies[TaskKind] & Record<string, unknown>;
  // What the service reads besides the content: an image task's callback URL; a video task's echo.
  const field = KINDS[kind].callbackField;
  const body = (kind === 'video' ? withoutRequestContent(full) : { [field]: full[field] }) as TaskBodies[TaskKind];
  if (forward) return { prepared: { body, relay: Buffer.from(JSON.stringify(relayedBody(kind, full))) } };
  return { prepared: { body, source: bodySource(kind, full) } };
}

/** The buffers an outcome hands over rather than copies. */
export function transferList(outcome: Outcome): ArrayBuffer[] {
  if (!('prepared' in outcome)) return [];
  const { relay, source } = outcome.prepared;
  const bytes = relay ?? (source?.kind === 'bytes' ? source.bytes : undefined);
  // A small buffer lives in Node's shared pool, which must stay where it is.
  return bytes && bytes.buffer.byteLength > Buffer.poolSize ? [bytes.buffer as ArrayBuffer] : [];
}

/** The worker's entry, dist/server/proxy/body-worker.js: found from the bundle's chunks and from the sources the tests run. */
function workerUrl(): URL {
  for (const candidate of [
    './body-worker.js',
    '../server/proxy/body-worker.js',
    '../../../dist/server/proxy/body-worker.js',
  ]) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(url)) return url;
  }
  throw new Error('the AI proxy body worker (dist/server/proxy/body-worker.js) is missing: run `npm run build`');
}

/** One worker thread, started on first use and kept; bodies are prepared one after another. */
export function createBodyPreparer() {
  let worker: Worker | undefined;
  let next = 0;
  const waiting = new Map<number, { resolve: (outcome: Outcome) => void; reject: (error: Error) => void }>();
  const start = () => {
    const started = new Worker(workerUrl());
    started.on('message', ({ id, outcome }: { id: number; outcome: Outcome }) => {
      waiting.get(id)?.resolve(outcome);
      waiting.delete(id);
    });
    // A crash (out of memory, then 'exit') or any other end: what it held fails with a 500, the next
    // body starts a new worker. Without an 'error' first, bodies waiting on it would wait for ever.
    let failure: Error | undefined;
    started.on('error', (error) => (failure = error));
    started.on('exit', (code) => {
      const error = failure ?? new Error(`the AI proxy body worker ended (exit code ${code})`);
      for (const { reject } of waiting.values()) reject(error);
      waiting.clear();
      if (worker === started) worker = undefined;
    });
    started.unref();
    return started;
  };
  const inWorker = (kind: TaskKind, raw: Buffer, forward: boolean) =>
    new Promise<Outcome>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      // A body is read whole into a buffer of its own (readJsonBody): handed over, not copied.
      const own = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : Buffer.from(raw);
      (worker ??= start()).postMessage({ id, kind, raw: own, forward }, [own.buffer as ArrayBuffer]);
    });

  return {
    /** The prepared submission, or the 400 of a body that is not JSON or breaks the contract. */
    async prepare<K extends TaskKind>(kind: K, raw: Buffer, forward: boolean): Promise<Prepared<K>> {
      const outcome = raw.length <= INLINE_MAX ? prepareBody(kind, raw, forward) : await inWorker(kind, raw, forward);
      if ('malformed' in outcome) throw malformedJson(outcome.malformed.at, outcome.malformed.length);
      if ('issues' in outcome) throw invalidRequest(outcome.issues as { path: (string | number)[]; message: string }[]);
      // A Buffer comes out of the worker as a plain Uint8Array: a Buffer again, over the same bytes.
      const { source } = outcome.prepared;
      if (source?.kind === 'bytes')
        source.bytes = Buffer.from(source.bytes.buffer, source.bytes.byteOffset, source.bytes.length);
      return outcome.prepared as Prepared<K>;
    },
    async close(): Promise<void> {
      await worker?.terminate();
      worker = undefined;
    },
  };
}
