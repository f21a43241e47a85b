// Forward mode: one request to an AI provider, with our key and never the caller's credentials,
// and its failures mapped to our error shape (DESIGN.md §4).
import { codeForStatus, type ErrorBody } from '../../contract/errors.js';
import { UPSTREAM_ANSWER_MAX } from '../../contract/limits.js';
import { HttpError } from '../errors.js';
import { JsonShape } from '../json-shape.js';

export interface Upstream {
  baseUrl: string;
  key?: string;
  /** `Authorization` sends `Bearer KEY`; any other header name sends the key as it is. */
  keyHeader: string;
  timeoutMs: number;
  /** Which env var holds the key, for hints. */
  keyEnv: string;
}

/** A 4xx of the provider, answered with the same status in our error shape. */
export class UpstreamRejection extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly retryAfter?: string,
  ) {
    super(body.message);
  }
}

/** The provider's message from its error body, whatever shape it uses. */
function providerMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    for (const key of ['message', 'detail', 'error', 'title']) {
      const value = body[key];
      if (typeof value === 'string' && value.trim()) return value.trim().slice(0, 500);
      if (value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string') {
        return String((value as { message: string }).message).slice(0, 500);
      }
    }
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 200) || undefined;
}

/**
 * The provider's answer as text, within the bounds a request body has: at most UPSTREAM_ANSWER_MAX
 * bytes, JsonShape's depth and values. Past them it stops reading (502): parsing, storing and relaying
 * an answer of any size held the event loop for seconds and took gigabytes.
 */
async function answerText(body: ReadableStream<Uint8Array> | null): Promise<string> {
  const shape = new JsonShape();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body ?? []) {
    size += chunk.length;
    const refusal = size > UPSTREAM_ANSWER_MAX ? `it is over ${UPSTREAM_ANSWER_MAX} bytes` : shape.feed(chunk)?.message;
    if (refusal) throw new HttpError('upstream_error', `the AI provider's answer was refused: ${refusal}`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * A body's bytes in 64 KiB pieces, one per turn of the event loop: fetch writes the next piece as soon as
 * the socket takes one, and a fast reader would take 25 MiB without a pause.
 */
async function* pieces(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += 64 * 1024) {
    yield bytes.subarray(at, at + 64 * 1024);
    await new Promise(setImmediate);
  }
}

/**
 * Sends one request to the provider and returns its JSON answer; `body` is JSON to serialise, or its
 * bytes already serialised. Throws HttpError 502 (unreachable,
 * 5xx, 401, 403, an answer that is not JSON), 504 (no answer in time) or UpstreamRejection (other 4xx).
 */
export async function callUpstream(
  upstream: Upstream,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  closing: AbortSignal,
): Promise<unknown> {
  const url = upstream.baseUrl + path;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // Bytes (a submission, up to 25 MiB) go in pieces, with their length: given whole, fetch copies them
  // twice on the event loop.
  if (body instanceof Uint8Array) headers['content-length'] = String(body.length);
  if (upstream.key) {
    headers[upstream.keyHeader] =
      upstream.keyHeader.toLowerCase() === 'authorization' ? `Bearer ${upstream.key}` : upstream.key;
  }
  const timeout = AbortSignal.timeout(upstream.timeoutMs);
  let status: number;
  let text: string;
  let retryAfter: string | null;
  try {
    const response = await fetch(url, {
      method,
      headers,
      ...(body instanceof Uint8Array
        ? { body: pieces(body) as unknown as ReadableStream, duplex: 'half' }
        : { body: body === undefined ? undefined : JSON.stringify(body) }),
      redirect: 'manual',
      signal: AbortSignal.any([timeout, closing]),
    });
    status = response.status;
    retryAfter = response.headers.get('retry-after');
    text = await answerText(response.body);
  } catch (error) {
    if (error instanceof HttpError) throw error;
    if (timeout.aborted) {
      throw new HttpError('upstream_timeout', `the AI provider did not answer within ${upstream.timeoutMs} ms`);
    }
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new HttpError('upstream_error', `cannot reach the AI provider (${cause})`);
  }
  if (status === 401 || status === 403) {
    throw new HttpError(
      'upstream_error',
      `the AI provider refused the registry's key (HTTP ${status})`,
      undefined,
      `the registry operator should check ${upstream.keyEnv}`,
    );
  }
  if (status >= 500 || (status >= 300 && status < 400)) {
    const said = providerMessage(text);
    throw new HttpError('upstream_error', `the AI provider failed (HTTP ${status})${said ? `: ${said}` : ''}`);
  }
  if (status >= 400) {
    const said = providerMessage(text);
    throw new UpstreamRejection(
      status,
      {
        error: codeForStatus(status),
        message: `the AI provider rejected the request (HTTP ${status})${said ? `: ${said}` : ''}`,
      },
      retryAfter ?? undefined,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError('upstream_error', `the AI provider answered HTTP ${status} with something that is not JSON`);
  }
}

/** The provider's task id from its answer, or a 502 when it gave none. */
export function upstreamTaskId(answer: unknown, family: 'image' | 'video'): string {
  const holder = family === 'image' ? (answer as { data?: unknown } | null)?.data : answer;
  const id = (holder as { task_id?: unknown } | null | undefined)?.task_id;
  if (typeof id === 'string' && id) return id;
  if (typeof id === 'number') return String(id);
  throw new HttpError('upstream_error', 'the AI provider answered without a task id');
}

/** The object of the provider's answer that carries the task (its `data` for images), or a 502. */
export function upstreamView(answer: unknown, family: 'image' | 'video'): Record<string, unknown> {
  const holder = family === 'image' ? (answer as { data?: unknown } | null)?.data : answer;
  if (!holder || typeof holder !== 'object' || Array.isArray(holder)) {
    throw new HttpError('upstream_error', 'the AI provider answered in an unexpected shape');
  }
  return holder as Record<string, unknown>;
}
