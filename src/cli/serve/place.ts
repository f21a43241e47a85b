// Where a registry keeps its data: the data dir, the database and the archive storage, from the flags and
// their environment variables, checked together before anything is opened.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseTarget, StorageTarget } from '../../server/backends.js';
import { type BackendUrl, backendUrl, withBackend } from '../backend-urls.js';
import { defaultDataDir } from '../data-dir.js';
import { CliError, EXIT, invalidInput } from '../errors.js';
import { userPath } from '../make-dir.js';
import type { ServeFlags } from './options.js';
import { parsePgPool } from './values.js';

export interface ServePlace {
  databaseUrl?: BackendUrl;
  storageUrl?: BackendUrl;
  databaseTarget?: DatabaseTarget;
  storageTarget?: StorageTarget;
  /** Undefined for an instance that keeps everything in PostgreSQL and --storage. */
  dataDir?: string;
  defaultDir: string;
  /** DIR/admin-token, and whether it was there before this start. */
  adminTokenFile?: string;
  hadAdminTokenFile: boolean;
  /** The data dir is missing or empty (--seed fills only such a one). */
  empty: boolean;
}

export async function servePlace(flags: ServeFlags, env: NodeJS.ProcessEnv, maxArchive: number): Promise<ServePlace> {
  const backends = await import('../../server/backends.js');
  const defaultDir = defaultDataDir(env);
  const databaseUrl = backendUrl(env, flags, 'database');
  const storageUrl = backendUrl(env, flags, 'storage');
  const pool = parsePgPool(flags.pgPool);
  const parsed = await withBackend(databaseUrl, backends.parseDatabaseUrl);
  const databaseTarget = parsed?.kind === 'postgres' ? { ...parsed, pool } : parsed;
  const storageTarget = await withBackend(storageUrl, backends.parseStorageUrl);
  // With PostgreSQL an instance needs no local state: without --data-dir it has none.
  const stateless = flags.dataDir === undefined && databaseTarget?.kind === 'postgres';
  const dataDir = stateless
    ? undefined
    : flags.dataDir === undefined
      ? defaultDir
      : userPath(flags.dataDir, '--data-dir');
  if (stateless && !flags.migrateOnly) checkStateless(storageTarget, env);
  const adminTokenFile = dataDir === undefined ? undefined : join(dataDir, 'admin-token');
  const hadAdminTokenFile = adminTokenFile !== undefined && existsSync(adminTokenFile);
  if (dataDir !== undefined && existsSync(dataDir) && !statSync(dataDir).isDirectory()) {
    throw new CliError(
      `cannot open the data dir ${dataDir}: it is a file, not a directory`,
      EXIT.failure,
      'data_dir',
      '--data-dir DIR names a directory (created when missing)',
    );
  }
  const empty = dataDir !== undefined && (!existsSync(dataDir) || readdirSync(dataDir).length === 0);
  if (storageTarget?.kind === 's3' && maxArchive > backends.S3_MAX_PUT) {
    throw invalidInput(
      `--max-archive must be at most 5GiB with S3 storage (one PUT stores an archive) (got "${flags.maxArchive}")`,
    );
  }
  return {
    databaseUrl,
    storageUrl,
    databaseTarget,
    storageTarget,
    dataDir,
    defaultDir,
    adminTokenFile,
    hadAdminTokenFile,
    empty,
  };
}

/** An instance without a data dir must be told where archives live and what the admin's token is. */
function checkStateless(storageTarget: StorageTarget | undefined, env: NodeJS.ProcessEnv): void {
  if (!storageTarget)
    throw invalidInput(
      'with --database postgres://… and no --data-dir, --storage (or NODEREG_STORAGE_URL) must say where archives live',
      '--storage s3://bucket/prefix',
    );
  if (!env.NODEREG_ADMIN_TOKEN) {
    throw invalidInput(
      "with --database postgres://… and no --data-dir, set NODEREG_ADMIN_TOKEN (the admin's token, the same on every instance)",
      'or give --data-dir DIR to keep a generated one in DIR/admin-token',
    );
  }
}
