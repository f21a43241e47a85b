// Where the registry keeps its data, from the URLs of `serve --database` and `--storage` (the
// issue [scale] Interface): a path or `sqlite:PATH` is SQLite, `postgres://` or `postgresql://`
// PostgreSQL; a path is a local archive dir, `s3://bucket/prefix` S3-compatible storage.
import { resolve } from 'node:path';
import { createLocalArchiveStorage } from './archives/storage.js';
import type { RegistryServerOptions } from './options.js';
import { createTaskStore } from './proxy/store.js';
import { openDatabase } from './store/db.js';
import { createSqliteRegistryStore } from './store/sqlite-registry-store.js';

/** A PostgreSQL target's `pool`: connections opened at most (default DEFAULT_PG_POOL). */
export type DatabaseTarget = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; pool?: number };
export type StorageTarget = { kind: 'local'; dir: string } | { kind: 's3'; bucket: string; prefix: string };

export { S3_MAX_PUT } from './archives/s3-limits.js';

/** A problem with one of the URLs, in words for the operator. */
export class BackendUrlError extends Error {}

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

export function parseDatabaseUrl(text: string): DatabaseTarget {
  if (/^postgres(ql)?:\/\//i.test(text)) {
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      // reported below
    }
    // Named without its user and password, so a password never reaches the terminal or a log.
    if (!url?.hostname)
      throw new BackendUrlError(
        `"${text.replace(/^([a-z]+:\/\/).*@/i, '$1…@')}" is not a PostgreSQL URL such as postgres://user:pass@host:5432/db`,
      );
    return { kind: 'postgres', url: text };
  }
  const path = text.replace(/^sqlite:(\/\/)?/i, '');
  const scheme = SCHEME.exec(path)?.[1];
  // One letter is a Windows drive (C:\...), not a scheme.
  if (scheme && scheme.length > 1)
    throw new BackendUrlError(`"${scheme}:" is not a database nodereg knows: use a path, sqlite:PATH or postgres://…`);
  if (!path) throw new BackendUrlError('the SQLite path is empty: use a path or sqlite:PATH');
  return { kind: 'sqlite', path: resolve(path) };
}

export function parseStorageUrl(text: string): StorageTarget {
  const s3 = /^s3:\/\/([^/]*)\/?(.*)$/i.exec(text);
  if (s3) {
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(s3[1]))
      throw new BackendUrlError(`"${s3[1]}" is not an S3 bucket name (s3://bucket/optional/prefix)`);
    return { kind: 's3', bucket: s3[1], prefix: s3[2].replace(/\/+$/, '') };
  }
  const scheme = SCHEME.exec(text)?.[1];
  if (scheme && scheme.length > 1)
    throw new BackendUrlError(`"${scheme}:" is not a storage nodereg knows: use a directory or s3://bucket/prefix`);
  if (!text) throw new BackendUrlError('the storage directory is empty: use a directory or s3://bucket/prefix');
  return { kind: 'local', dir: resolve(text) };
}

/**
 * The `database` option of the server for this target, migrated. PostgreSQL also holds the server's
 * secret (the first instance creates it) and the AI proxy's tasks, results and deliveries.
 */
export async function openDatabaseTarget(
  target: DatabaseTarget,
  log?: (line: string) => void,
): Promise<NonNullable<RegistryServerOptions['database']>> {
  if (target.kind === 'sqlite') {
    const db = openDatabase(target.path, log);
    return { store: createSqliteRegistryStore(db), tasks: createTaskStore(db), close: () => void db.close() };
  }
  const { connectPostgres } = await import('./store/postgres-registry-store.js');
  const pg = await connectPostgres(target.url, log, target.pool);
  return { store: pg.store, tasks: pg.tasks, secret: pg.secret, shared: true, close: () => pg.close() };
}

/** Applies the migrations and returns (`serve --migrate-only`). */
export async function migrateOnly(target: DatabaseTarget, log?: (line: string) => void): Promise<void> {
  if (target.kind === 'sqlite') {
    openDatabase(target.path, log).close();
    return;
  }
  const { connectPostgres } = await import('./store/postgres-registry-store.js');
  await (await connectPostgres(target.url, log)).close();
}

/**
 * The `archives` option of the server for this target. An S3 bucket is checked once here, so that a
 * wrong bucket, endpoint or credential stops the start with the S3 server's own words.
 */
export async function openStorageTarget(
  target: StorageTarget,
  env: NodeJS.ProcessEnv,
): Promise<NonNullable<RegistryServerOptions['archives']>> {
  if (target.kind === 'local') return createLocalArchiveStorage(target.dir);
  const { createS3ArchiveStorage, checkBucket } = await import('./archives/s3-storage.js');
  await checkBucket(target.bucket, env);
  return createS3ArchiveStorage({ bucket: target.bucket, prefix: target.prefix, env });
}
