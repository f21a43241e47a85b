// Migrating a PostgreSQL database that other instances, of this version or an older one, keep using.
// The migrations run in one transaction under an advisory lock, and hold their tables' locks until it
// commits, so that transaction only does what takes a moment. What takes as long as the data is large
// runs after it commits, while other instances keep answering: the fills of new columns, row by row
// in ordinary transactions, and the indexes, built concurrently (docs/decisions.md).
import type postgres from 'postgres';
import { postgresMigrations, type ConcurrentIndex } from '../postgres-migrations.js';
import { count, first, flag, only, optionalText, text } from '../rows.js';
import { searchWords, UNFILLED_WORDS } from '../search-words.js';
import { UNFILLED_VERSION_ORDER, versionOrder } from '../version-order.js';

/** Any number, the same for every instance: the lock migrations are applied under. */
const MIGRATION_LOCK = 7_411_202;
/** Held by the instance building the indexes; another one that finds it held leaves the build to it. */
const INDEX_BUILD_LOCK = 7_411_203;

/**
 * Applies pending migrations under an advisory lock (instances starting together wait for each
 * other), then fills the rows an older nodereg left without the new columns, then builds the indexes
 * of the migrations that are built concurrently.
 */
export async function migratePostgres(sql: postgres.Sql, log?: (line: string) => void): Promise<void> {
  const { from, applied } = await applyMigrations(sql);
  // An operator learns of a schema change: an older nodereg cannot use the database after it.
  if (applied.length > 0 && from === 0) log?.(`made the PostgreSQL schema (${applied.length} migrations)`);
  else if (applied.length > 0)
    log?.(
      `migrated the PostgreSQL database from schema ${from} to ${from + applied.length} (${applied.join(', ')}): an older nodereg refuses it from now on (keep a backup to go back)`,
    );
  await fillVersionOrder(sql);
  await fillSearchWords(sql);
  await buildIndexes(sql);
}

/** Applies the pending migrations in one transaction: the schema they started from, and their names. */
async function applyMigrations(sql: postgres.Sql): Promise<{ from: number; applied: string[] }> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`;
    const current = only(
      await tx`SELECT coalesce(max(version), 0)::int AS current FROM schema_migrations`,
      (row) => count(row, 'current'),
      'the schema',
    );
    const applied: string[] = [];
    for (const [index, migration] of postgresMigrations.entries()) {
      const version = index + 1;
      if (version <= current) continue;
      if (migration.sql) await tx.unsafe(migration.sql);
      await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${version}, ${migration.name}, ${new Date().toISOString()})`;
      applied.push(migration.name);
    }
    return { from: current, applied };
  });
}

/** Versions stored without version_order (before the column, or by an older nodereg) get theirs, in one statement. */
async function fillVersionOrder(sql: postgres.Sql): Promise<void> {
  const missing = (await sql.unsafe(UNFILLED_VERSION_ORDER)).map((row) => ({
    id: text(row, 'id'),
    version: text(row, 'version'),
  }));
  if (missing.length === 0) return;
  const [ids, orders] = [missing.map((row) => row.id), missing.map((row) => versionOrder(row.version))];
  await sql`UPDATE versions SET version_order = filled.value FROM unnest(${sql.array(ids)}::text[], ${sql.array(orders)}::text[]) AS filled(id, value)
            WHERE versions.id = filled.id AND versions.version_order IS NULL`;
}

/** Nodes stored without words (before the column, or by an older nodereg) get theirs, in one statement. */
async function fillSearchWords(sql: postgres.Sql): Promise<void> {
  const missing = (await sql.unsafe(UNFILLED_WORDS)).map((row) => ({
    id: text(row, 'id'),
    name: optionalText(row, 'name'),
  }));
  if (missing.length === 0) return;
  const [ids, words] = [missing.map((row) => row.id), missing.map((row) => searchWords(row.id, row.name))];
  await sql`UPDATE nodes SET words = filled.value FROM unnest(${sql.array(ids)}::text[], ${sql.array(words)}::text[]) AS filled(id, value)
            WHERE nodes.id = filled.id AND nodes.words IS NULL`;
}

/** The indexes of the applied migrations that are built concurrently, each built unless it is there and valid. */
async function buildIndexes(sql: postgres.Sql): Promise<void> {
  const applied = only(
    await sql`SELECT coalesce(max(version), 0)::int AS applied FROM schema_migrations`,
    (row) => count(row, 'applied'),
    'the schema',
  );
  const indexes = postgresMigrations.slice(0, applied).flatMap((migration) => migration.concurrentIndexes ?? []);
  if (
    indexes.length === 0 ||
    (await Promise.all(indexes.map((index) => indexState(sql, index)))).every((state) => state === 'valid')
  )
    return;
  // A session's lock, on the connection that builds: CREATE INDEX CONCURRENTLY runs outside a transaction.
  const connection = await sql.reserve();
  try {
    const locked = only(
      await connection`SELECT pg_try_advisory_lock(${INDEX_BUILD_LOCK}) AS locked`,
      (row) => flag(row, 'locked'),
      'the index lock',
    );
    if (!locked) return; // another instance builds them; searches are answered without the index meanwhile
    try {
      for (const index of indexes) await buildIndex(connection, index);
    } finally {
      await connection`SELECT pg_advisory_unlock(${INDEX_BUILD_LOCK})`;
    }
  } finally {
    connection.release();
  }
}

async function indexState(sql: postgres.Sql, index: ConcurrentIndex): Promise<'valid' | 'invalid' | 'missing'> {
  const valid = first(
    await sql`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
              WHERE c.relname = ${index.name} AND c.relnamespace = current_schema()::regnamespace`,
    (row) => flag(row, 'valid'),
  );
  return valid === undefined ? 'missing' : valid ? 'valid' : 'invalid';
}

/** Builds one index concurrently; one left invalid by a build that stopped (its instance died) is built again. */
async function buildIndex(sql: postgres.Sql, index: ConcurrentIndex): Promise<void> {
  const state = await indexState(sql, index);
  if (state === 'valid') return;
  if (state === 'invalid') await sql.unsafe(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`);
  await sql.unsafe(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index.name} ${index.on}`);
}
