// Tuning of the server and the client: defaults, timeouts, budgets of memory. Not wire rules (those are
// in src/contract/limits.ts); plain data, imported without loading zod.

const MiB = 1024 * 1024;

export const DEFAULT_REGISTRY_URL = 'http://127.0.0.1:4880';
export const DEFAULT_PORT = 4880;
/** `serve --pg-pool`: connections each instance opens to PostgreSQL at most. */
export const DEFAULT_PG_POOL = 10;
/** `serve --pg-pool`: the most it takes (PostgreSQL's own max_connections is 100 by default). */
export const MAX_PG_POOL = 1_000;
/** `serve` stopping: a connection that moves no byte for this long while its request comes in or its answer waits for the client is cut (docs/decisions.md). */
export const CLOSE_STALLED_MS = 10_000;
/** `serve` stopping: how long the graceful stop may take in all; then every connection left is cut (docs/decisions.md). */
export const CLOSE_MAX_MS = 60_000;
/**
 * `restore`: how long PostgreSQL may leave one statement (a batch of rows, the commit, a migration)
 * unanswered before restore gives up, as serve gives a store call 5 s: a batch takes milliseconds, a
 * lock or a commit may take longer, and a frozen server would otherwise hold restore forever (docs/decisions.md).
 */
export const RESTORE_DEADLINE_MS = 30_000;
/**
 * The largest answer the CLI reads whole from a registry (every version of a node is the largest it
 * sends): past it the read stops, rather than a hostile server filling the publisher's memory.
 */
export const REGISTRY_ANSWER_MAX = 64 * MiB;
/**
 * The largest AI result the CLI downloads (`--output`): a provider's image or video is tens of MB; past
 * it the download stops, rather than an endless body filling the user's disk.
 */
export const AI_RESULT_MAX = 1024 * MiB;
/**
 * Bytes of request bodies read before their caller is known, in all (publish takes its credential in
 * the body, the incumbent's way): past it such a request is 503 for the moment.
 */
export const ANONYMOUS_BODIES_MAX = 64 * MiB;
/**
 * Bytes of JSON request bodies being read or held by their requests, in all (five of the largest): past
 * it a request is 503 for the moment, so that slow senders with a token, or AI submissions waiting on a
 * stalled provider, cannot hold memory without bound either.
 */
export const JSON_BODIES_MAX = 128 * MiB;
/**
 * Requests of one connection that may wait for their answer (HTTP/1.1 pipelining); the server answers
 * them one at a time, in order, and one that arrives past these is answered 503 and the connection closed.
 */
export const PIPELINED_MAX = 32;
export const DEFAULT_MAX_ARCHIVE = 200 * MiB;
export const DEFAULT_MAX_UNPACKED = 1024 * MiB;
/**
 * AI proxy sandbox: bytes of result files kept (until they expire, 24 h) per user and in all; a
 * submission that would pass either is 429 (`serve --sandbox-quota-user`, `--sandbox-quota-total`).
 */
export const DEFAULT_SANDBOX_QUOTA = { user: 32 * MiB, total: 512 * MiB } as const;
export const UPLOAD_URL_TTL_SECONDS = 15 * 60;
/** How long the registry's scan of an upload may run before the registry answers the upload anyway. */
export const SCAN_TIMEOUT_MS = 10 * 60_000;
/** How long a client waits for the answer to an upload after its last byte: the scan's time, and a minute to check and store. */
export const UPLOAD_ANSWER_TIMEOUT_MS = SCAN_TIMEOUT_MS + 60_000;
/** How long the client waits for the whole answer to one API request; one that takes longer fails (exit 1) and is not sent again. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** How long an upload's body may make no progress before the client gives up on that attempt. */
export const UPLOAD_IDLE_TIMEOUT_MS = 30_000;
/**
 * Uploads waiting for a scan worker (beyond those being scanned), at most; past it an upload is 503
 * `unavailable` with Retry-After (SCAN_QUEUE_RETRY_AFTER_S), before its body is read when the queue is
 * full already. A scan of a small node takes milliseconds; a full queue means the workers are swamped.
 */
export const SCAN_QUEUE_MAX = 64;
export const SCAN_QUEUE_RETRY_AFTER_S = 5;
/** At most this many findings are kept per version, the most severe first. */
export const SCAN_MAX_KEPT_FINDINGS = 200;
/**
 * How long the client keeps retrying an idempotent request (and an upload) while the registry looks
 * like it is restarting: a connection refused or reset, or 502, 503, 504 (a proxy in front of it).
 * A connection refused or reset before the registry has answered once in a run is not given this
 * time: it is more often a wrong URL than a restart.
 */
export const RESTART_WINDOW_MS = 15_000;
/**
 * The longest restart window a user may ask for (--retry-window, NODEREG_RETRY_WINDOW): a registry
 * being upgraded may take minutes, but a window of hours is more likely a slip that would hold a CI job.
 */
export const RETRY_WINDOW_MAX_MS = 3_600_000;
