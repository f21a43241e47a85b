// The answer to an error no route expected: 503 when the cause is the operator's to fix or passes
// (descriptors, disk, a backend out of reach), else 500; both are logged.
import { join } from 'node:path';
import { withoutUrlSecrets } from '../shared/url.js';
import { StorageUnavailableError } from './archives/storage.js';
import { HttpError } from './errors.js';
import type { ServerLog } from './repeated-warnings.js';

/** Where a 503's log line says the fault is: the backends' URLs (passwords masked) or the data dir. */
export interface FaultPlaces {
  /** A 503's line has a kind: an outage's repeated lines are limited (repeated-warnings.ts). */
  log?: ServerLog;
  backendUrls?: { database?: string; storage?: string };
  dataDir?: string;
}

/**
 * True when the database or the archive storage cannot be reached for the moment: a refused, reset or
 * timed-out connection, a host name that does not resolve (a DNS outage), the PostgreSQL client's connection errors, PostgreSQL's connection exceptions
 * (SQLSTATE 08…), shutdown (57P01–57P03) and too many connections (53300), or an S3 error answer: a 5xx,
 * or a 4xx refusing our keys or the bucket (AccessDenied, NoSuchBucket), or a store that answered
 * otherwise than a store does (StorageUnavailableError), none of them the client's doing (a missing
 * object's 404 is handled where it is expected).
 */
function backendUnavailable(error: unknown): boolean {
  if (error instanceof StorageUnavailableError) return true;
  const { code, name, $metadata } = (error ?? {}) as {
    code?: unknown;
    name?: unknown;
    $metadata?: { httpStatusCode?: number };
  };
  if (
    typeof code === 'string' &&
    /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|EAI_AGAIN|ENOTFOUND|CONNECT_TIMEOUT|CONNECTION_\w+|08\w{3}|57P0[123]|53300)$/.test(
      code,
    )
  )
    return true;
  return name === 'TimeoutError' || ($metadata?.httpStatusCode ?? 0) >= 400;
}

/** Writes refused for the operator to fix, not bugs: the disk is full, or serve may not write there. */
const UNWRITABLE = [
  {
    codes: /^(ENOSPC|EDQUOT|SQLITE_FULL|53100)$/, // PostgreSQL's disk_full
    why: 'out of disk space',
    fix: 'free space there',
    message: 'the registry is out of disk space; nothing was stored. Retry once its operator has freed space',
  },
  {
    codes: /^(EACCES|EPERM|EROFS|SQLITE_READONLY\w*)$/,
    why: 'not allowed to write',
    fix: 'let the user serve runs as write there (its permissions, a read-only mount)',
    message:
      'the registry may not write its data at the moment; nothing was stored. Retry once its operator has fixed it',
  },
];
const unwritable = (error: unknown) =>
  UNWRITABLE.find((kind) => kind.codes.test(String((error as { code?: unknown } | undefined)?.code)));

/**
 * The answer to an error no layer expected: 503 when the process is out of descriptors (EMFILE, ENFILE),
 * the disk is full or may not be written, or the database or archive storage is out of reach, and the client may retry, else 500. Both are logged.
 */
export function internalError(error: unknown, { log, backendUrls: urls = {}, dataDir }: FaultPlaces): HttpError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EMFILE' || code === 'ENFILE') {
    log?.(`out of file descriptors (${code}): answered 503`, 'warn', 'descriptors');
    return new HttpError(
      'unavailable',
      'the server is out of resources for the moment; retry shortly',
      undefined,
      undefined,
      { 'Retry-After': '1' },
    );
  }
  const refused = unwritable(error);
  if (refused) {
    const database = /^(SQLITE_|\d)/.test(String(code));
    const url = database ? urls.database : urls.storage;
    const where =
      (error as NodeJS.ErrnoException).path ??
      (url ? withoutUrlSecrets(url) : dataDir && join(dataDir, database ? 'registry.db' : 'archives'));
    log?.(
      `${refused.why} (${code}) writing ${database ? 'the database' : 'archives'}${where ? ` ${where}` : ''}; ${refused.fix}: answered 503`,
      'warn',
      `${refused.why} ${database ? 'database' : 'archives'}`,
    );
    // Longer than a client's request timeout: it shows this at once rather than retrying into it.
    return new HttpError('unavailable', refused.message, undefined, undefined, { 'Retry-After': '60' });
  }
  // A newer nodereg migrated the shared database under this one (a rolling upgrade): a statement prepared
  // on a connection no longer fits its table. postgres.js has dropped it, and re-prepares it on the retry;
  // it retries by itself outside a transaction only.
  if ((error as { routine?: unknown } | undefined)?.routine === 'RevalidateCachedQuery') {
    log?.(
      `the database's tables changed under a prepared statement (another nodereg migrated them): answered 503; the retry prepares it again`,
      'warn',
      'tables changed',
    );
    return new HttpError(
      'unavailable',
      "the registry's database changed its tables a moment ago; retry",
      undefined,
      undefined,
      { 'Retry-After': '1' },
    );
  }
  if (backendUnavailable(error)) {
    // The S3 client's errors (its answers and its network failures) carry $metadata; the database's do not.
    const storage =
      error instanceof StorageUnavailableError || (error as { $metadata?: unknown }).$metadata !== undefined;
    const url = storage ? urls.storage : urls.database;
    const which = `${storage ? 'archive storage' : 'database'}${url ? ` ${withoutUrlSecrets(url)}` : ''}`;
    const check = storage
      ? ((error as { fix?: string }).fix ?? 'check that the bucket exists, its endpoint answers and it takes the keys')
      : 'check that the database runs, is reachable and takes the credentials';
    log?.(`${which} unavailable (${(error as Error).message}); ${check}: answered 503`, 'warn', `${which} unavailable`);
    return new HttpError(
      'unavailable',
      'the registry cannot reach its database or archive storage at the moment; retry shortly',
      undefined,
      undefined,
      { 'Retry-After': '5' },
    );
  }
  log?.(`internal error: ${error instanceof Error ? error.stack : String(error)}`, 'error');
  return new HttpError('internal', 'an internal error occurred; it has been logged');
}
