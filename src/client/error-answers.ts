// How the client reads an error answer: a registry's error body, a proxy's HTML page, or another
// server's answer (the URL is not a registry's).
import { meetsErrorBody } from '../contract/answers.js';
import { codeForStatus, isNoRoute, type ErrorBody } from '../contract/errors.js';
import { ApiError, ForeignAnswerError } from './errors.js';
import { withoutQuery, type Answer } from './http.js';

/** Statuses of a proxy saying the registry behind it is away (restarting, down). */
export const PROXY_AWAY_STATUSES = new Set([502, 503, 504]);

/**
 * Reads an error answer into an ApiError, whatever its body. With `registry`, the answer of one of its
 * routes: a 404 that is not a registry's error answer is a ForeignAnswerError (the URL is wrong), told
 * from a registry's 404 for a missing publisher, node or version, which keeps its words.
 */
export async function toApiError(answer: Answer, registry?: { base: string; url: string }): Promise<ApiError> {
  const text = await answer.text().catch(() => '');
  const body = errorBody(text);
  if (registry && answer.status === 404 && (body ? isNoRoute(body.message) : !carriesMessage(text))) {
    const page = htmlTitle(text);
    const what = body
      ? `"${body.message.slice(0, 200)}"`
      : page !== undefined
        ? `with ${htmlPage(page)}`
        : "with a body that is not a registry's error answer";
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
    return meetsErrorBody(body) ? (body as ErrorBody) : undefined;
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
export function apiError(
  status: number,
  statusText: string,
  text: string,
  retryAfter?: string,
  parsed = errorBody(text),
): ApiError {
  const title = parsed ? undefined : htmlTitle(text);
  const page = title === undefined ? undefined : `${htmlPage(title)}, not a registry's answer`;
  return new ApiError(
    status,
    parsed?.error ?? codeForStatus(status),
    parsed?.message ??
      (page ? `HTTP ${status} ${statusText}: ${page}` : text.trim().slice(0, 200) || `HTTP ${status} ${statusText}`),
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
  PROXY_AWAY_STATUSES.has(status)
    ? 'the registry, or a proxy in front of it, is unavailable (it may be restarting): try again later'
    : 'another server answered (a proxy, or not a registry at all): check the registry URL';

/** The title of an HTML page (a proxy's or a web server's; '' when it has none); undefined for any other text. */
function htmlTitle(text: string): string | undefined {
  const trimmed = text.trimStart();
  if (!/^<(?:!doctype\b|html\b|head\b|body\b)/i.test(trimmed)) return undefined;
  return /<title[^>]*>([^<]*)<\/title>/i.exec(trimmed)?.[1].replace(/\s+/g, ' ').trim() ?? '';
}

const htmlPage = (title: string) => (title ? `an HTML page titled "${title.slice(0, 100)}"` : 'an HTML page');
