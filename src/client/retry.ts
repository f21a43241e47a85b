// The client's one retry policy, for API requests and archive uploads alike: which failures are tried
// again, how long to wait before each try, and when to give up.
import { ApiError, NetworkError } from './errors.js';

/**
 * What a request may be sent again for. `idempotent` (GET, PUT, DELETE, HEAD): network failures and
 * 429, 502–504. `repeatable`: a POST the server makes safe to repeat (a publish), again only when a
 * 429 or 503 asks with Retry-After, when its connection was refused or reset, or when a proxy answers
 * 502 or 504. `once`: any other POST, never (a 503 may come after work was done). `upload`: the archive
 * PUT, also on any 5xx, 408 and a request that timed out (no answer after the whole body is final).
 */
export type RetryKind = 'idempotent' | 'repeatable' | 'once' | 'upload';

export interface RetryPolicy {
  /** Retries allowed in any case. */
  retries: number;
  /** Delay before retry n (1-based), in ms, when the server does not ask for one. */
  backoffMs: (retry: number) => number;
  /** Past `retries`, failures of a restarting registry are retried until this long after the first one. */
  restartWindowMs: number;
  /** The user chose the window (--retry-window): it then bounds every retry, and a refused connection is waited for from the start. */
  windowChosen: boolean;
  /** A Retry-After longer than this is not waited for: the error is shown, with when to try again. */
  timeoutMs: number;
}

/** Where a run of tries stands: the retry about to be decided (0 for the first failure) and when the first failure came. */
export interface RetryState {
  retry: number;
  firstFailure: number;
  /** Whether the registry has answered anything in this run: a refused or reset connection then means a restart, not a wrong URL. */
  answered: boolean;
}

/** Backoff before retry n: 0.3 s, 0.6 s, 1.2 s, then every 2 s. */
export const backoffMs = (retry: number) => Math.min(2_000, 300 * 2 ** (retry - 1));

const RETRY_STATUSES = new Set([429, 502, 503, 504]);
/** Network failures of a registry that is restarting (or a link that dropped). */
const RESTART_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE']);
const RESTART_STATUSES = new Set([502, 503, 504]);

/** How long a Retry-After header asks to wait, in ms (seconds or an HTTP date); undefined without one. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isNaN(seconds) ? Date.parse(value) - now : seconds * 1000;
  return Number.isNaN(ms) ? undefined : Math.max(0, ms);
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

/** Whether trying again may mend `failure`, for a request of this kind. */
function transient(failure: ApiError | NetworkError, kind: RetryKind): boolean {
  if (kind === 'upload') {
    return failure instanceof NetworkError
      ? failure.transient
      : failure.status >= 500 || failure.status === 408 || failure.status === 429;
  }
  if (failure instanceof ApiError) return RETRY_STATUSES.has(failure.status);
  return failure.reason !== 'no answer in time' && failure.transient;
}

/** Whether a POST the server makes safe to repeat goes again for `failure`. */
function repeatableFor(failure: ApiError | NetworkError, asked: number | undefined): boolean {
  if (asked !== undefined) return true;
  if (failure instanceof NetworkError) return RESTART_CODES.has(failure.reason);
  // A 502 or 504 is a proxy's (a registry's publish never answers them): the registry behind it is away, as when it restarts.
  return failure.status === 502 || failure.status === 504;
}

/** A network failure after retries says how long they went on: a refused URL gave up at once, a restart was waited for. */
function triedFor(failure: ApiError | NetworkError, tries: number, since: number): ApiError | NetworkError {
  if (!(failure instanceof NetworkError) || tries < 2) return failure;
  return new NetworkError(
    failure.url,
    `${failure.reason} (${tries} tries in ${((Date.now() - since) / 1000).toFixed(1)} s)`,
    failure.transient,
  );
}

/**
 * The policy's decision on `failure`: wait this long and try again, or give up with this error. A retry
 * fits within `retries`, or, for a restarting registry, within the restart window since the first
 * failure; with a window the user chose, within it in any case.
 */
export function nextTry(
  policy: RetryPolicy,
  failure: ApiError | NetworkError,
  state: RetryState,
  kind: RetryKind,
): { wait: number } | { error: Error } {
  const asked =
    failure instanceof ApiError && (failure.status === 429 || failure.status === 503)
      ? retryAfterMs(failure.retryAfter)
      : undefined;
  const wait = asked ?? policy.backoffMs(state.retry + 1);
  const fits = Date.now() - state.firstFailure + wait <= policy.restartWindowMs;
  const allowed = policy.windowChosen
    ? policy.restartWindowMs > 0 && fits && (state.retry < policy.retries || restarting(failure, true))
    : state.retry < policy.retries || (restarting(failure, state.answered) && fits);
  const sendable =
    kind === 'idempotent' || kind === 'upload' || (kind === 'repeatable' && repeatableFor(failure, asked));
  if (!transient(failure, kind) || !allowed || !sendable)
    return { error: triedFor(failure, state.retry + 1, state.firstFailure) };
  if (asked !== undefined && asked > policy.timeoutMs) return { error: failure };
  return { wait };
}
