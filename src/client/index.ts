// Free of zod at run time: `call` checks input with the schemas its caller passes, and answers are read
// with the checks generated from the contract (contract/answers.ts).
import type { z } from 'zod';
import { meetsContract, readAnswer, routes, type Route } from '../contract/answers.js';
import { codeForStatus, fieldErrors, isNoRoute, type ErrorBody } from '../contract/errors.js';
import { ApiError, ForeignAnswerError, NetworkError, RequestInvalidError } from './errors.js';
import { send, withoutQuery, type Answer } from './http.js';

export { ApiError, ForeignAnswerError, NetworkError, RequestInvalidError };
export type { Answer };
import { CONTENT_SHA256_HEADER } from '../contract/upload.js';
import { REQUEST_TIMEOUT_MS, RESTART_WINDOW_MS, UPLOAD_ANSWER_TIMEOUT_MS, UPLOAD_IDLE_TIMEOUT_MS } from '../shared/tuning.js';
import type { NodeVersion } from '../contract/resources.js';
import type { BodyOf, Operation, ParamsOf, QueryOf, ResponseOf } from '../contract/operation.js';
import { buildPath } from '../contract/paths.js';

/**
 * A CLI run checks its input against a few schemas once: zod's compiled fast path for objects costs
 * more to build than it saves. Asked per parse: the global setting is read when a schema is built, before this module runs.
 */
const ONCE = { jitless: true } as const;

/** Waits `ms`; node:timers/promises is loaded only when a request is retried (a read pays nothing). */
const sleep = async (ms: number, signal?: AbortSignal) => (await import('node:timers/promises')).setTimeout(ms, undefined, { signal });

/** Idempotent methods are retried on network errors and on these statuses. */
const RETRY_METHODS = new Set(['GET', 'PUT', 'DELETE', 'HEAD']);
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
/** Backoff before retry n: 0.3 s, 0.6 s, 1.2 s, then every 2 s; a Retry-After of 429 or 503 is waited instead, up to the timeout. */
const backoffMs = (retry: number) => Math.min(2_000, 300 * 2 ** (retry - 1));
/** Network failures of a registry that is restarting (or a link that dropped): retried for RESTART_WINDOW_MS. */
const RESTART_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
const RESTART_STATUSES = new Set([502, 503, 504]);

/** A network failure after retries says how long they went on: a refused URL gave up at once, a restart was waited for. */
function triedFor(failure: unknown, tries: number, since: number): unknown {
  if (!(failure instanceof NetworkError) || tries < 2) return failure;
  return new NetworkError(failure.url, `${failure.reason} (${tries} tries in ${((Date.now() - since) / 1000).toFixed(1)} s)`, failure.transient);
}

/**
 * Whether `failure` looks like a registry that is restarting. A connection refused or reset counts only
 * once the registry has answered in this run: before, it is more often a wrong URL (a typo, another
 * port) than a restart. A 502–504 is a proxy saying the registry behind it is away.
 */
function restarting(failure: ApiError | NetworkError, answeredBefore: boolean): boolean {
  if (failure instanceof ApiError) return RESTART_STATUSES.has(failure.status);
  return answeredBefore && RESTART_CODES.has(failure.reason);
}

/** How long a Retry-After header asks to wait, in ms (seconds or an HTTP date); undefined without one. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isNaN(seconds) ? Date.parse(value) - now : seconds * 1000;
  return Number.isNaN(ms) ? undefined : Math.max(0, ms);
}

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
}

export interface CallInput<O extends Operation> {
  params?: ParamsOf<O>;
  query?: QueryOf<O>;
  body?: BodyOf<O>;
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

function validate<T extends z.ZodType>(schema: T, value: unknown, where: 'params' | 'query' | 'body'): z.output<T> {
  const result = schema.safeParse(value, ONCE);
  if (!result.success) throw new RequestInvalidError(where, fieldErrors(result.error.issues));
  return result.data;
}

/**
 * Reads an error answer into an ApiError, whatever its body. With `registry`, the answer of one of its
 * routes: a 404 that is not a registry's error answer is a ForeignAnswerError (the URL is wrong), told
 * from a registry's 404 for a missing publisher, node or version, which keeps its words.
 */
async function toApiError(answer: Answer, registry?: { base: string; url: string }): Promise<ApiError> {
  const text = await answer.text().catch(() => '');
  const body = errorBody(text);
  if (registry && answer.status === 404 && (body ? isNoRoute(body.message) : !carriesMessage(text))) {
    const page = htmlTitle(text);
    const what = body ? `"${body.message.slice(0, 200)}"` : page !== undefined ? `with ${htmlPage(page)}` : "with a body that is not a registry's error answer";
    throw new ForeignAnswerError(registry.base, withoutQuery(registry.url), answer.status, what);
  }
  return apiError(answer.status, answer.statusText, text, header(answer, 'retry-after'), body);
}

const header = (answer: Answer, name: string): string | undefined => {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** The registry's error body in `text`, if it is one. */
function errorBody(text: string): ErrorBody | undefined {
  try {
    const body: unknown = JSON.parse(text);
    return meetsContract('ErrorBody', body) ? (body as ErrorBody) : undefined;
  } catch {
    return undefined; // not JSON: a proxy or a foreign server
  }
}

/**
 * A JSON error answer with a `message`, in a shape other than ours: another registry's 404 for a missing
 * node may look so (the incumbent's shape is not in the spec), so it keeps its words, not "not a registry".
 */
function carriesMessage(text: string): boolean {
  try {
    const body: unknown = JSON.parse(text);
    return typeof (body as { message?: unknown } | null)?.message === 'string';
  } catch {
    return false;
  }
}

/** An error answer, from its status and body text; a body that is not the registry's falls back to the status. */
function apiError(status: number, statusText: string, text: string, retryAfter?: string, parsed = errorBody(text)): ApiError {
  const title = parsed ? undefined : htmlTitle(text);
  const page = title === undefined ? undefined : `${htmlPage(title)}, not a registry's answer`;
  return new ApiError(
    status,
    parsed?.error ?? codeForStatus(status),
    parsed?.message ?? (page ? `HTTP ${status} ${statusText}: ${page}` : text.trim().slice(0, 200) || `HTTP ${status} ${statusText}`),
    parsed?.hint ?? (page ? pageHint(status) : undefined),
    parsed?.details,
    retryAfter,
  );
}

/**
 * What to do about an HTML error page: a 502–504 page is a proxy's (or load balancer's) saying the
 * registry behind it is down or restarting; any other is more often a URL that is not a registry's.
 */
const pageHint = (status: number) =>
  RESTART_STATUSES.has(status)
    ? 'the registry, or a proxy in front of it, is unavailable (it may be restarting): try again later'
    : 'another server answered (a proxy, or not a registry at all): check the registry URL';

/** The title of an HTML page (a proxy's or a web server's; '' when it has none); undefined for any other text. */
function htmlTitle(text: string): string | undefined {
  const trimmed = text.trimStart();
  if (!/^<(?:!doctype\b|html\b|head\b|body\b)/i.test(trimmed)) return undefined;
  return /<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1].replace(/\s+/g, ' ').trim() ?? '';
}

const htmlPage = (title: string) => (title ? `an HTML page titled "${title.slice(0, 100)}"` : 'an HTML page');

export type Client = ReturnType<typeof createClient>;

export function createClient(options: ClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const log = options.log ?? (() => {});
  const headers: Record<string, string> = { 'user-agent': options.userAgent ?? 'nodereg' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const retries = options.retries ?? 2;
  const restartWindowMs = options.restartWindowMs ?? RESTART_WINDOW_MS;
  /** Whether the registry has answered anything in this run: a refused or reset connection then means a restart, not a wrong URL. */
  let answered = false;
  /**
   * Whether retry n+1 fits: within `allowed` retries, or, for a restarting registry, within the restart
   * window since `firstFailure`; with a window the user chose, within it in any case.
   */
  const mayRetry = (failure: ApiError | NetworkError, retry: number, allowed: number, firstFailure: number, wait: number) => {
    const fits = Date.now() - firstFailure + wait <= restartWindowMs;
    if (options.windowChosen) return restartWindowMs > 0 && fits && (retry < allowed || restarting(failure, true));
    return retry < allowed || (restarting(failure, answered) && fits);
  };

  /**
   * Sends a request, retrying idempotent ones on network errors, 429 and 502–504; resolves with a
   * 2xx (or 3xx) answer (with `read`, its body read whole) and turns every failure into ApiError or NetworkError.
   */
  async function request(
    method: string,
    url: string,
    init: { body?: string; headers?: Record<string, string>; timeout?: boolean; timeoutMs?: number; token?: boolean; read?: boolean; repeatable?: boolean; route?: boolean } = {},
  ): Promise<Answer> {
    const requestHeaders = { ...headers, ...init.headers };
    if (init.token === false) delete requestHeaders.authorization;
    let firstFailure: number | undefined;
    for (let retry = 0; ; retry++) {
      log(`→ ${method} ${url}`);
      let answer: Answer | undefined;
      let failure: ApiError | NetworkError;
      try {
        const limitMs = init.timeoutMs ?? timeoutMs;
        answer = await send({ method, url, headers: requestHeaders, body: init.body, timeoutMs: init.timeout === false ? undefined : limitMs, idleMs: limitMs });
        answered = true;
        log(`← ${answer.status} ${method} ${url}`);
        if (answer.status < 400) {
          if (!init.read) return answer;
          // read here, so that an answer cut midway is a network failure, retried as one that never began
          const text = await answer.text();
          return { ...answer, text: async () => text };
        }
        failure = await toApiError(answer, init.route ? { base, url } : undefined);
      } catch (error) {
        if (!(error instanceof NetworkError)) throw error;
        failure = error;
      }
      const timedOut = failure instanceof NetworkError && failure.reason === 'no answer in time';
      const transient = failure instanceof NetworkError ? !timedOut && failure.transient : RETRY_STATUSES.has(failure.status);
      const asked = failure instanceof ApiError && (failure.status === 429 || failure.status === 503) ? retryAfterMs(failure.retryAfter) : undefined;
      // A POST the server makes safe to repeat (a publish) goes again when a 429 or 503 with Retry-After
      // asks, when its connection was refused or reset (a registry restarting; a kept-alive socket it closed),
      // or when a proxy answers 502 or 504 for the registry.
      const dropped = failure instanceof NetworkError && RESTART_CODES.has(failure.reason);
      // A 502 or 504 is a proxy's (a registry's publish never answers them): the registry behind it is away, as when it restarts.
      const away = failure instanceof ApiError && (failure.status === 502 || failure.status === 504);
      const wait = asked ?? backoffMs(retry + 1);
      firstFailure ??= Date.now();
      if (!transient || !mayRetry(failure, retry, retries, firstFailure, wait) || !(RETRY_METHODS.has(method) || (init.repeatable && (asked !== undefined || dropped || away)))) {
        throw triedFor(failure, retry + 1, firstFailure);
      }
      // a server asking for a longer wait than the timeout gets its error shown, with when to try again
      if (asked !== undefined && asked > timeoutMs) throw failure;
      log(`↻ retry ${retry + 1}: ${method} ${url}`);
      await sleep(wait);
    }
  }

  /**
   * Sends one operation's request and reads its answer (undefined when it has no JSON body). With
   * `exact`, an answer that does not meet the contract is a ForeignAnswerError rather than kept as sent.
   */
  async function exchange(route: Route, params: Record<string, string>, query: Record<string, unknown>, body: unknown, exact = false, timeoutMs?: number): Promise<unknown> {
    const searchParams = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) searchParams.set(key, String(value));
    const qs = searchParams.toString();
    const url = base + buildPath(route.path, params) + (qs ? `?${qs}` : '');
    const sent = body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {};
    const answer = await request(route.method, url, { ...sent, read: true, repeatable: route.repeatable, timeoutMs, route: true });
    const text = await answer.text();
    if (route.responseKind !== 'json' || answer.status === 204) return undefined;
    let data: unknown;
    try {
      data = readAnswer(route.id, text);
    } catch {
      throw new ForeignAnswerError(base, withoutQuery(url), answer.status, 'with a body that is not JSON');
    }
    if (exact && !meetsContract(route.id, data)) throw new ForeignAnswerError(base, withoutQuery(url), answer.status, "with a body that is not the shape of a registry's answer");
    return data;
  }

  return {
    baseUrl: base,
    hasToken: Boolean(options.token),
    url: (path: string) => base + path,

    /**
     * Calls one operation of the contract: validates the input with its schemas, sends it, reads the
     * answer; `exact` for a caller that reads the answer's fields as the contract has them (whoami, login);
     * `timeoutMs` for one that waits longer than the client's timeout (an AI submission).
     */
    async call<O extends Operation>(operation: O, input: CallInput<O> = {}, options: { exact?: boolean; timeoutMs?: number } = {}): Promise<ResponseOf<O>> {
      const params = validate(operation.params, input.params ?? {}, 'params') as Record<string, string>;
      const query = validate(operation.query, input.query ?? {}, 'query') as Record<string, unknown>;
      const body = operation.bodyKind === 'json' ? validate(operation.body, input.body ?? {}, 'body') : undefined;
      return (await exchange(operation, params, query, body, options.exact, options.timeoutMs)) as ResponseOf<O>;
    },

    /**
     * The same for input its caller has already checked, without the contract's schemas: a read of a
     * `route` (contract/answers.ts) loads no zod. `T` is the answer's type.
     */
    async read<T>(route: Route, params: Record<string, string>, query: Record<string, unknown> = {}): Promise<T> {
      return (await exchange(route, params, query, undefined)) as T;
    },

    /** The same for a request with a JSON body its caller has already checked (contract/requests.ts). */
    async send<T>(route: Route, params: Record<string, string>, body: unknown): Promise<T> {
      return (await exchange(route, params, {}, body)) as T;
    },

    /** GETs an absolute URL (a download URL, a task result); the answer's body is a stream, unread. */
    async download(url: string): Promise<Answer> {
      // The token is for the registry only: a URL elsewhere (a mirror, a provider) never sees it.
      const sameOrigin = new URL(url, base).origin === new URL(base).origin;
      return request('GET', url, { timeout: false, token: sameOrigin });
    },

    /**
     * PUTs an archive to a signed upload URL, streamed (see upload.ts), retrying transient failures
     * with a fresh stream. The token is not sent: the URL is signed.
     */
    async upload(signedUrl: string, input: UploadInput): Promise<NodeVersion> {
      const attempts = input.attempts ?? 3;
      const backoff = input.backoffMs ?? backoffMs;
      let firstFailure: number | undefined;
      for (let attempt = 1; ; attempt++) {
        try {
          log(`→ PUT ${withoutQuery(signedUrl)} (attempt ${attempt})`);
          const { putStream } = await import('./upload.js');
          const response = await putStream(signedUrl, {
            body: input.open(),
            headers: {
              'user-agent': headers['user-agent'],
              'content-type': 'application/zip',
              'content-length': String(input.size),
              [CONTENT_SHA256_HEADER.toLowerCase()]: input.sha256,
            },
            onProgress: input.onProgress ? (sent) => input.onProgress!(sent, input.size) : undefined,
            signal: input.signal,
            idleMs: input.idleMs ?? UPLOAD_IDLE_TIMEOUT_MS,
            answerMs: input.answerMs ?? UPLOAD_ANSWER_TIMEOUT_MS,
          });
          log(`← ${response.status} PUT ${withoutQuery(signedUrl)}`);
          if (response.status >= 400) throw apiError(response.status, response.statusText, response.text, response.retryAfter);
          try {
            return readAnswer(routes.uploadArchive.id, response.text) as NodeVersion;
          } catch {
            throw apiError(response.status, response.statusText, response.text);
          }
        } catch (error) {
          // No answer after the whole body is final (upload.ts): the registry may still be checking it.
          const transient =
            (error instanceof NetworkError && error.transient) ||
            (error instanceof ApiError && (error.status >= 500 || error.status === 408 || error.status === 429));
          // as for the API requests: a Retry-After of 429 or 503 is waited instead, up to the timeout
          const asked = error instanceof ApiError && (error.status === 429 || error.status === 503) ? retryAfterMs(error.retryAfter) : undefined;
          const wait = asked ?? backoff(attempt);
          firstFailure ??= Date.now();
          if (input.signal?.aborted) throw input.signal.reason;
          if (!transient || !mayRetry(error as ApiError | NetworkError, attempt - 1, attempts - 1, firstFailure, wait)) throw triedFor(error, attempt, firstFailure);
          if (asked !== undefined && asked > timeoutMs) throw error;
          log(`↻ upload attempt ${attempt} failed (${(error as Error).message}); retrying`);
          await sleep(wait, input.signal);
        }
      }
    },
  };
}
