// The registry client: one typed `call` per operation of the contract, a download and the archive
// upload, all under one retry policy (retry.ts). Free of zod at run time: answers are read with the
// checks generated from the contract (contract/answers.ts); a command checks what the user typed
// before it calls (cli/resolve.ts).
import { meetsContract, readAnswer } from '../contract/answers.js';
import { CONTENT_SHA256_HEADER, SHA256_HEX_PATTERN } from '../contract/upload.js';
import {
  REQUEST_TIMEOUT_MS,
  RESTART_WINDOW_MS,
  UPLOAD_ANSWER_TIMEOUT_MS,
  UPLOAD_IDLE_TIMEOUT_MS,
} from '../shared/tuning.js';
import type { BodyOf, Operation, ParamsOf, QueryOf, ResponseOf } from '../contract/operation.js';
import { buildPath } from '../contract/paths.js';
import type { NodeVersion } from '../contract/resources.js';
import { apiError, toApiError } from './error-answers.js';
import { ApiError, ForeignAnswerError, NetworkError } from './errors.js';
import { send, withoutQuery, type Answer } from './http.js';
import { backoffMs, nextTry, type RetryKind, type RetryPolicy } from './retry.js';
import { routes, type Route } from './routes.js';

export { ApiError, ForeignAnswerError, NetworkError, routes };
export type { Answer, Route };
export { retryAfterMs } from './retry.js';

/** Waits `ms`; node:timers/promises is loaded only when a request is retried (a read pays nothing). */
const sleep = async (ms: number, signal?: AbortSignal) =>
  (await import('node:timers/promises')).setTimeout(ms, undefined, { signal });

export interface ClientOptions {
  baseUrl: string;
  token?: string;
  /** Per-request timeout in ms for API calls (uploads have none). */
  timeoutMs?: number;
  /**
   * Retries of idempotent requests (GET, PUT, DELETE) on network errors, 429 and 502–504, and of a
   * repeatable POST (publish) on a 429 or 503 with Retry-After or a connection refused or reset.
   */
  retries?: number;
  /** Past `retries`, failures of a restarting registry are retried until this long after the first one (default RESTART_WINDOW_MS). */
  restartWindowMs?: number;
  /**
   * The user chose `restartWindowMs` (--retry-window): then it bounds every retry (0: none), and a connection
   * refused or reset before the registry has answered is waited for too: they know the registry is there.
   */
  windowChosen?: boolean;
  userAgent?: string;
  /** Receives one line per request; never sees a token. */
  log?: (line: string) => void;
  /** Told of each wait before a try again, and when the request it was for is done: the CLI shows it. */
  waits?: WaitReport;
}

/** A wait before trying a request again: what is awaited, why, and how long it has gone on. */
export interface RetryWait {
  method: string;
  url: string;
  /** The failure that is waited out: a network reason or an HTTP status. */
  reason: string;
  /** Since the first failure. */
  elapsedMs: number;
  /** How long the retry window lets it go on. */
  windowMs: number;
}

export interface WaitReport {
  wait(info: RetryWait): void;
  end(): void;
}

/** The input of one operation's call, typed by the contract. */
export interface CallInput<O extends Operation> {
  params?: ParamsOf<O>;
  query?: QueryOf<O>;
  body?: BodyOf<O>;
}

export interface CallOptions {
  /** An answer that does not meet the contract is a ForeignAnswerError rather than kept as sent (whoami, login read its fields). */
  exact?: boolean;
  /** For a call that waits longer than the client's timeout (an AI submission). */
  timeoutMs?: number;
}

export interface UploadInput {
  /** Opens the archive afresh: each attempt reads it again from the start (a web or a Node stream). */
  open: () => ReadableStream<Uint8Array> | NodeJS.ReadableStream;
  size: number;
  sha256: string;
  onProgress?: (sentBytes: number, totalBytes: number) => void;
  /** Attempts at least, for failures that a retry can mend (network, 5xx, 408, 429); more within the restart window for a restarting registry. */
  attempts?: number;
  /** Delay before retry n (1-based), in ms. */
  backoffMs?: (retry: number) => number;
  /** Stops the upload, also between attempts; it rejects with the signal's reason and is not retried. */
  signal?: AbortSignal;
  /** An attempt gives up when its body makes no progress for this long (default UPLOAD_IDLE_TIMEOUT_MS). */
  idleMs?: number;
  /** An attempt gives up when no answer comes this long after its last byte (default UPLOAD_ANSWER_TIMEOUT_MS). */
  answerMs?: number;
}

interface RequestInit {
  body?: string;
  headers?: Record<string, string>;
  /** false: no whole-answer timeout (a download streams for as long as it takes). */
  timeout?: boolean;
  timeoutMs?: number;
  /** false: the token is not sent (a URL of another origin). */
  token?: boolean;
  kind: RetryKind;
  /** The answer of one of the registry's routes: a 404 that is not a registry's is a ForeignAnswerError. */
  route?: boolean;
}

export type Client = ReturnType<typeof createClient>;

/**
 * The SHA-256 a download's answer announces (X-Content-SHA256, DownloadHeaders in the contract), lowercase;
 * undefined when it has none (a registry of an older version), '' when it is not a SHA-256.
 */
export function announcedSha256(answer: Answer): string | undefined {
  const value = answer.headers[CONTENT_SHA256_HEADER.toLowerCase()];
  if (value === undefined) return undefined;
  return typeof value === 'string' && new RegExp(SHA256_HEX_PATTERN).test(value) ? value.toLowerCase() : '';
}

/** The connection every request of a client shares: where, as whom, and the retry policy. */
interface Connection {
  base: string;
  headers: Record<string, string>;
  policy: RetryPolicy;
  log: (line: string) => void;
  waits?: WaitReport;
  /** Whether the registry has answered anything in this run (see RetryState.answered). */
  answered: boolean;
}

/**
 * Sends a request, trying again as the retry policy says; resolves with a 2xx (or 3xx) answer, its body
 * read whole (an answer cut midway is a network failure, retried as one that never began), and turns
 * every failure into ApiError or NetworkError.
 */
async function request(connection: Connection, method: string, url: string, init: RequestInit): Promise<Answer> {
  try {
    return await tryRequest(connection, method, url, init);
  } finally {
    connection.waits?.end();
  }
}

/** The failure a wait is for, in a word or a status. */
const failureReason = (failure: ApiError | NetworkError) =>
  failure instanceof ApiError ? `HTTP ${failure.status}` : failure.reason;

async function tryRequest(connection: Connection, method: string, url: string, init: RequestInit): Promise<Answer> {
  const headers = { ...connection.headers, ...init.headers };
  if (init.token === false) delete headers.authorization;
  const timeoutMs = init.timeoutMs ?? connection.policy.timeoutMs;
  let firstFailure: number | undefined;
  for (let retry = 0; ; retry++) {
    connection.log(`→ ${method} ${url}`);
    let failure: ApiError | NetworkError;
    try {
      const answer = await send({
        method,
        url,
        headers,
        body: init.body,
        timeoutMs: init.timeout === false ? undefined : timeoutMs,
        idleMs: timeoutMs,
      });
      connection.answered = true;
      connection.log(`← ${answer.status} ${method} ${url}`);
      if (answer.status < 400) {
        if (init.timeout === false) return answer;
        const text = await answer.text();
        return { ...answer, text: async () => text };
      }
      failure = await toApiError(answer, init.route ? { base: connection.base, url } : undefined);
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      failure = error;
    }
    firstFailure ??= Date.now();
    const next = nextTry(connection.policy, failure, { retry, firstFailure, answered: connection.answered }, init.kind);
    if ('error' in next) throw next.error;
    connection.log(`↻ retry ${retry + 1}: ${method} ${url}`);
    connection.waits?.wait({
      method,
      url: withoutQuery(url),
      reason: failureReason(failure),
      elapsedMs: Date.now() - firstFailure,
      windowMs: connection.policy.restartWindowMs,
    });
    await sleep(next.wait);
  }
}

/** The retry kind of a route's request: idempotent methods, a repeatable POST, or a POST sent once. */
const kindOf = (route: Route): RetryKind =>
  route.method !== 'POST' ? 'idempotent' : route.repeatable ? 'repeatable' : 'once';

/** The URL of a route's request: its path with the params put in, and the query's defined values. */
function routeUrl(base: string, route: Route, params: object, query: object): string {
  const searchParams = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) searchParams.set(key, String(value));
  const qs = searchParams.toString();
  return base + buildPath(route.path, params as Record<string, string>) + (qs ? `?${qs}` : '');
}

/**
 * Calls one operation of the contract: sends its input, reads its answer (undefined when it has no JSON
 * body). With `exact`, an answer that does not meet the contract is a ForeignAnswerError rather than kept as sent.
 */
async function callRoute<O extends Operation>(
  connection: Connection,
  route: Route<O>,
  input: CallInput<O>,
  options: CallOptions,
): Promise<ResponseOf<O>> {
  const url = routeUrl(connection.base, route, input.params ?? {}, input.query ?? {});
  const sent =
    input.body !== undefined
      ? { body: JSON.stringify(input.body), headers: { 'content-type': 'application/json' } }
      : {};
  const answer = await request(connection, route.method, url, {
    ...sent,
    kind: kindOf(route),
    timeoutMs: options.timeoutMs,
    route: true,
  });
  const text = await answer.text();
  if (route.responseKind !== 'json' || answer.status === 204) return undefined as ResponseOf<O>;
  let data: unknown;
  try {
    data = await readAnswer(route.id, text);
  } catch {
    throw new ForeignAnswerError(connection.base, withoutQuery(url), answer.status, 'with a body that is not JSON');
  }
  if (options.exact && !(await meetsContract(route.id, data))) {
    throw new ForeignAnswerError(
      connection.base,
      withoutQuery(url),
      answer.status,
      "with a body that is not the shape of a registry's answer",
    );
  }
  return data as ResponseOf<O>;
}

/**
 * PUTs an archive to a signed upload URL, streamed (see upload.ts), trying again with a fresh stream as
 * the retry policy says for uploads. The token is not sent: the URL is signed.
 */
async function uploadArchive(connection: Connection, signedUrl: string, input: UploadInput): Promise<NodeVersion> {
  const policy: RetryPolicy = {
    ...connection.policy,
    retries: (input.attempts ?? 3) - 1,
    backoffMs: input.backoffMs ?? backoffMs,
  };
  const { putStream } = await import('./upload.js');
  let firstFailure: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      connection.log(`→ PUT ${withoutQuery(signedUrl)} (attempt ${attempt})`);
      const response = await putStream(signedUrl, {
        body: input.open(),
        headers: {
          'user-agent': connection.headers['user-agent'],
          'content-type': 'application/zip',
          'content-length': String(input.size),
          [CONTENT_SHA256_HEADER.toLowerCase()]: input.sha256,
        },
        onProgress: input.onProgress ? (sent) => input.onProgress?.(sent, input.size) : undefined,
        signal: input.signal,
        idleMs: input.idleMs ?? UPLOAD_IDLE_TIMEOUT_MS,
        answerMs: input.answerMs ?? UPLOAD_ANSWER_TIMEOUT_MS,
      });
      connection.log(`← ${response.status} PUT ${withoutQuery(signedUrl)}`);
      if (response.status >= 400)
        throw apiError(response.status, response.statusText, response.text, response.retryAfter);
      try {
        return (await readAnswer('uploadArchive', response.text)) as NodeVersion;
      } catch {
        throw apiError(response.status, response.statusText, response.text);
      }
    } catch (error) {
      if (input.signal?.aborted) throw input.signal.reason;
      if (!(error instanceof ApiError || error instanceof NetworkError)) throw error;
      firstFailure ??= Date.now();
      const next = nextTry(
        policy,
        error,
        { retry: attempt - 1, firstFailure, answered: connection.answered },
        'upload',
      );
      if ('error' in next) throw next.error;
      connection.log(`↻ upload attempt ${attempt} failed (${error.message}); retrying`);
      await sleep(next.wait, input.signal);
    }
  }
}

export function createClient(options: ClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = { 'user-agent': options.userAgent ?? 'nodereg' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const connection: Connection = {
    base,
    headers,
    log: options.log ?? (() => {}),
    waits: options.waits,
    answered: false,
    policy: {
      retries: options.retries ?? 2,
      backoffMs,
      restartWindowMs: options.restartWindowMs ?? RESTART_WINDOW_MS,
      windowChosen: Boolean(options.windowChosen),
      timeoutMs: options.timeoutMs ?? REQUEST_TIMEOUT_MS,
    },
  };
  return {
    baseUrl: base,
    hasToken: Boolean(options.token),
    url: (path: string) => base + path,
    /** Calls one operation of the contract (`routes.getNode`, …), typed by it. */
    call: <O extends Operation>(route: Route<O>, input: CallInput<O> = {}, callOptions: CallOptions = {}) =>
      callRoute(connection, route, input, callOptions),
    /** GETs an absolute URL (a download URL, a task result); the answer's body is a stream, unread. */
    download(url: string): Promise<Answer> {
      // The token is for the registry only: a URL elsewhere (a mirror, a provider) never sees it.
      const sameOrigin = new URL(url, base).origin === new URL(base).origin;
      return request(connection, 'GET', url, { timeout: false, token: sameOrigin, kind: 'idempotent' });
    },
    upload: (signedUrl: string, input: UploadInput) => uploadArchive(connection, signedUrl, input),
  };
}
