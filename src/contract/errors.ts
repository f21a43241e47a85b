// Free of zod at run time, so that the client's error path loads nothing more; the schemas of the
// error body are in error-body.ts.
import type * as z from 'zod';
import type { ErrorBody, FieldError } from './error-body.js';
import { ERROR_MESSAGE_MAX, MAX_FIELD_ERRORS, SCAN_QUEUE_PER_PUBLISHER, TOKENS_MAX } from './limits.js';

export type { ErrorBody, FieldError };

/** Every error code of the wire, with the HTTP status it travels with. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  banned: 403,
  not_found: 404,
  request_timeout: 408,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  upstream_error: 502,
  unavailable: 503,
  upstream_timeout: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The 503 of an upload while the registry's scan queue is full (SCAN_QUEUE_MAX): nothing is stored, it may be sent again. */
export const SCAN_QUEUE_FULL =
  'the registry has too many uploads waiting for their scan at the moment; nothing was stored, retry shortly';
/** The same for a publisher holding its share of the queue (SCAN_QUEUE_PER_PUBLISHER). */
export const publisherScanQueueFull = (publisherId: string, most = SCAN_QUEUE_PER_PUBLISHER) =>
  `publisher ${publisherId} has ${most} uploads being scanned or waiting for their scan, the most one publisher may have; nothing was stored, retry shortly`;
/** An answer a server gives in the error shape, as the contract words it. */
export interface Refusal {
  code: ErrorCode;
  message: string;
  hint?: string;
  /** Seconds for a Retry-After header, when the request may be sent again as it is. */
  retryAfter?: number;
}
/** The 409 of a token made past TOKENS_MAX live ones: a publisher's PATs (`publisherId`), or the user's own. */
export const tooManyTokens = (publisherId?: string): Refusal => ({
  code: 'conflict',
  message: `${publisherId ? `publisher ${publisherId} has` : 'you have'} ${TOKENS_MAX} live tokens, the most there may be`,
  hint: 'revoke one you no longer use first (`nodereg token list`, `nodereg token revoke`)',
});
/**
 * The 503 of a request that arrives while `most` requests of its connection wait for their answers
 * (HTTP/1.1 pipelining); the connection closes after it.
 */
export const tooManyPipelined = (most: number): Refusal => ({
  code: 'unavailable',
  message: `more than ${most} requests of this connection are waiting for their answers; read them before sending more, or open another connection`,
  retryAfter: 1,
});
/** The hint of a publish refused for its declared archive size: nothing exists yet, so it can simply be tried again. */
export const ARCHIVE_TOO_LARGE_HINT =
  "nothing was created. Make the archive smaller (leave files out with [tool.nodereg] excludes or a .noderegignore file) and publish again, or ask the registry's operator to raise its limit (serve --max-archive)";
/** A publish whose node id another publisher holds (403): the id, not the token, is what to change. */
/** Without `publisherId`: a client that may not see the holder (a banned node answers 403 to all but admins). */
export const nodeIdTaken = (nodeId: string, publisherId?: string) =>
  `node ${nodeId} belongs to ${publisherId ? `publisher ${publisherId}` : 'another publisher (it is banned)'}; choose another node id`;
/** A new node id that reads as another publisher's node's (`image_tools` beside `image-tools`). */
export const nodeIdLookalike = (nodeId: string, existing: string) =>
  `node id ${nodeId} reads as node ${existing} of another publisher (ids compare in lower case, with _, . and runs of - as one -); choose another node id`;
export const NODE_ID_TAKEN_HINT =
  'node ids are unique on a registry: rename the node ([project] name in pyproject.toml)';
/**
 * The 400 of a body that is not JSON, from where it breaks (`at`, counted from 0, as JSON.parse counts;
 * its length when it ends too soon; undefined when unknown): never from what it holds, as a sender's
 * bytes are not ours to echo (a gzip body sent without its header came back as binary junk).
 */
export function malformedJson(at: number | undefined, length: number): string {
  if (at === undefined) return 'malformed JSON';
  return at < length
    ? `malformed JSON at byte ${at} of ${length}`
    : `malformed JSON: the body ends after ${length} bytes, before its JSON does`;
}

/**
 * The 404 of a path no route serves. A client tells it by these words from a 404 for a missing
 * publisher, node or version: a registry URL with a wrong path (`…/api`) reaches no route at all.
 */
export const noRoute = (method: string, path: string) => `no route for ${method} ${path}`;
export const isNoRoute = (message: string) => message.startsWith('no route for ');
export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** The code a bare status maps to when a layer has nothing more specific to say. */
export function codeForStatus(status: number): ErrorCode {
  const found = ERROR_CODES.find((code) => ERROR_STATUS[code] === status);
  if (found) return found;
  if (status >= 500) return 'internal';
  return 'invalid_request';
}

/**
 * Turns zod issues into the `details` of an error body; the path names the field to fix. At most
 * MAX_FIELD_ERRORS of them: an answer stays small whatever was sent.
 */
export function fieldErrors(issues: readonly z.core.$ZodIssue[], prefix = ''): FieldError[] {
  return issues.slice(0, MAX_FIELD_ERRORS).map((issue) => fieldError(issue.path, issue.message, prefix));
}

/** One field's problem as an error body names it: its path from the root (`node.tags.2`), and what is wrong. */
export function fieldError(path: readonly PropertyKey[], message: string, prefix = ''): FieldError {
  return {
    path: [prefix, ...path.map((part) => clip(String(part), 64))].filter(Boolean).join('.') || '(root)',
    message: clip(message, 300),
  };
}

/** Keys and messages may hold what a client sent: shortened, so that an answer stays small. */
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * An error answer's message, at most ERROR_MESSAGE_MAX characters: what a client sent (a 15 KB node id)
 * is cut in the middle, so that its start and its end ("not found", "and 12 more problems") stay.
 */
export function clipMessage(message: string): string {
  if (message.length <= ERROR_MESSAGE_MAX) return message;
  const half = Math.floor((ERROR_MESSAGE_MAX - 1) / 2);
  return `${message.slice(0, half)}…${message.slice(message.length - half)}`;
}

/** One line naming every field at fault: `star: Too big: expected number to be <=5`. */
export function describeFieldErrors(details: readonly FieldError[]): string {
  return details.map((d) => `${d.path}: ${d.message}`).join('; ');
}
/** The 409 of an upload while `most` uploads of the same version are in progress: nothing was read. */
export const uploadsOfVersionBusy = (nodeId: string, version: string, most: number): Refusal => ({
  code: 'conflict',
  message: `${most} uploads of version ${version} of node ${nodeId} are in progress, the most there may be at once; nothing was read`,
  hint: 'retry once they have ended (one of them stores the archive)',
  retryAfter: 5,
});
/** The 429 of an upload while its publisher has `most` uploads in progress: nothing was read. */
export const uploadsOfPublisherBusy = (publisherId: string, most: number): Refusal => ({
  code: 'rate_limited',
  message: `publisher ${publisherId} has ${most} uploads in progress, the most one publisher may have at once; nothing was read, retry shortly`,
  retryAfter: 5,
});
/** The 408 of an upload whose body came slower than `minRate` bytes a second over `windowMs`: nothing was stored. */
export const uploadTooSlow = (minRate: number, windowMs: number): Refusal => ({
  code: 'request_timeout',
  message: `the upload sent fewer than ${minRate} bytes a second over ${windowMs / 1000} s, the least this registry takes; nothing was stored`,
  hint: 'send it again over a faster link',
});
