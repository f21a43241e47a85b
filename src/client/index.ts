import ky, { HTTPError, TimeoutError } from 'ky';
import { config as zodConfig, type z } from 'zod';
import { ErrorBody, codeForStatus, fieldErrors } from '../contract/errors.js';
import { ApiError, NetworkError, RequestInvalidError } from './errors.js';
import { setTimeout } from 'node:timers/promises';
import { putStream, withoutQuery } from './upload.js';

export { ApiError, NetworkError, RequestInvalidError };
import { CONTENT_SHA256_HEADER } from '../contract/limits.js';
import { NodeVersion } from '../contract/resources.js';
import { buildPath, type BodyOf, type Operation, type ParamsOf, type QueryOf, type ResponseOf } from '../contract/operation.js';

// A CLI run parses a few answers once: zod's compiled fast path costs more to build than it saves.
zodConfig({ jitless: true });

export interface ClientOptions {
  baseUrl: string;
  token?: string;
  /** Per-request timeout in ms for API calls (uploads have none). */
  timeoutMs?: number;
  /** Retries of idempotent requests (GET, PUT, DELETE) on network errors, 429 and 502–504. */
  retries?: number;
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
  /** Attempts in all, for failures that a retry can mend (network, 5xx, 408, 429). */
  attempts?: number;
  /** Delay before retry n (1-based), in ms. */
  backoffMs?: (retry: number) => number;
  /** Stops the upload, also between attempts; it rejects with the signal's reason and is not retried. */
  signal?: AbortSignal;
}

function validate<T extends z.ZodType>(schema: T, value: unknown, where: 'params' | 'query' | 'body'): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new RequestInvalidError(where, fieldErrors(result.error.issues));
  return result.data;
}

/** Reads an error response into an ApiError, whatever its body. */
async function toApiError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => '');
  return apiError(response.status, response.statusText, text, response.headers.get('retry-after') ?? undefined);
}

/** An error answer, from its status and body text. */
function apiError(status: number, statusText: string, text: string, retryAfter?: string): ApiError {
  let parsed: ErrorBody | undefined;
  try {
    const result = ErrorBody.safeParse(JSON.parse(text));
    if (result.success) parsed = result.data;
  } catch {
    // not JSON: a proxy or a foreign server; fall back to the status
  }
  return new ApiError(
    status,
    parsed?.error ?? codeForStatus(status),
    parsed?.message ?? (text.trim().slice(0, 200) || `HTTP ${status} ${statusText}`),
    parsed?.hint,
    parsed?.details,
    retryAfter,
  );
}

export type Client = ReturnType<typeof createClient>;

export function createClient(options: ClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  const log = options.log ?? (() => {});
  const headers: Record<string, string> = { 'user-agent': options.userAgent ?? 'nodereg' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;

  const http = ky.create({
    headers,
    timeout: options.timeoutMs ?? 30_000,
    retry: {
      limit: options.retries ?? 2,
      methods: ['get', 'put', 'delete', 'head'],
      statusCodes: [429, 502, 503, 504],
      backoffLimit: 5_000,
    },
    hooks: {
      beforeRequest: [(request) => log(`→ ${request.method} ${request.url}`)],
      beforeRetry: [({ request, retryCount }) => log(`↻ retry ${retryCount}: ${request.method} ${request.url}`)],
      afterResponse: [(request, _options, response) => log(`← ${response.status} ${request.method} ${request.url}`)],
    },
  });

  /** Sends a request and turns every failure into ApiError or NetworkError. */
  async function send(url: string, init: Parameters<typeof http>[1]): Promise<Response> {
    try {
      return await http(url, init);
    } catch (error) {
      if (error instanceof HTTPError) throw await toApiError(error.response);
      if (error instanceof TimeoutError) throw new NetworkError(url, 'no answer in time');
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new NetworkError(url, cause?.code ?? cause?.message ?? (error as Error).message);
    }
  }

  return {
    baseUrl: base,
    hasToken: Boolean(options.token),
    url: (path: string) => base + path,

    /** Calls one operation of the contract: validates the input, sends it, parses the answer leniently. */
    async call<O extends Operation>(operation: O, input: CallInput<O> = {}): Promise<ResponseOf<O>> {
      const params = validate(operation.params, input.params ?? {}, 'params') as Record<string, string>;
      const query = validate(operation.query, input.query ?? {}, 'query') as Record<string, unknown>;
      const body = operation.bodyKind === 'json' ? validate(operation.body, input.body ?? {}, 'body') : undefined;
      const searchParams = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) if (value !== undefined) searchParams.set(key, String(value));
      const qs = searchParams.toString();
      const url = base + buildPath(operation.path, params) + (qs ? `?${qs}` : '');
      const response = await send(url, { method: operation.method, ...(body !== undefined ? { json: body } : {}) });
      if (operation.responseKind !== 'json' || response.status === 204) return undefined as ResponseOf<O>;
      const data: unknown = await response.json();
      // Lenient: a newer server may answer with more, or in a shape we do not know yet; keep it.
      const parsed = operation.response.safeParse(data);
      return (parsed.success ? parsed.data : data) as ResponseOf<O>;
    },

    /** GETs an absolute URL (a download URL, a task result) as a stream. */
    async download(url: string): Promise<Response> {
      // The token is for the registry only: a URL elsewhere (a mirror, a provider) never sees it.
      const sameOrigin = new URL(url, base).origin === new URL(base).origin;
      return send(url, { method: 'GET', timeout: false, ...(sameOrigin ? {} : { headers: { authorization: undefined } }) });
    },

    /**
     * PUTs an archive to a signed upload URL, streamed (see upload.ts), retrying transient failures
     * with a fresh stream. The token is not sent: the URL is signed.
     */
    async upload(signedUrl: string, input: UploadInput): Promise<NodeVersion> {
      const attempts = input.attempts ?? 3;
      const backoff = input.backoffMs ?? ((n) => 500 * 2 ** (n - 1));
      for (let attempt = 1; ; attempt++) {
        try {
          log(`→ PUT ${withoutQuery(signedUrl)} (attempt ${attempt})`);
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
          });
          log(`← ${response.status} PUT ${withoutQuery(signedUrl)}`);
          if (response.status >= 400) throw apiError(response.status, response.statusText, response.text, response.retryAfter);
          let data: unknown;
          try {
            data = JSON.parse(response.text);
          } catch {
            throw apiError(response.status, response.statusText, response.text);
          }
          const parsed = NodeVersion.safeParse(data);
          return (parsed.success ? parsed.data : data) as NodeVersion;
        } catch (error) {
          const transient =
            error instanceof NetworkError ||
            (error instanceof ApiError && (error.status >= 500 || error.status === 408 || error.status === 429));
          if (!transient || attempt >= attempts || input.signal?.aborted) throw input.signal?.aborted ? input.signal.reason : error;
          log(`↻ upload attempt ${attempt} failed (${(error as Error).message}); retrying`);
          await setTimeout(backoff(attempt), undefined, { signal: input.signal });
        }
      }
    },
  };
}
