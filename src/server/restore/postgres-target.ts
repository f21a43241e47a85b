// Restoring into a PostgreSQL database, migrated as serve migrates it.
import type postgres from 'postgres';
import { postgresTables, quote, SEEDED_TABLES, type Table } from '../restore-catalog.js';
import { watchedSockets } from '../store/postgres-deadline.js';
import { counted, holdsData, rowsOf, type Target } from './target.js';

type PostgresCell = postgres.ParameterOrJSON<never>;

/** Rows per INSERT into PostgreSQL (and never more than its 65,535 parameters). */
const BATCH_ROWS = 500;

/**
 * A PostgreSQL database, migrated as serve migrates it. Rows go in batches; JSON text becomes jsonb and
 * 0/1 booleans; the search column is generated there from the rows. Every trigger of ours is disabled
 * while rows go in (each writes a copied table: generations, the rating's sum), and the sequences are
 * moved past the copied ids. The secret goes into server_secret.
 */
export async function postgresTarget(url: string, deadlineMs: number): Promise<Target> {
  const { default: postgres } = await import('postgres');
  const { migratePostgres } = await import('../store/postgres-registry-store.js');
  // `socket` is documented in postgres.js's README ("Custom socket") but missing from its types.
  const sockets = watchedSockets();
  const sql = postgres(url, { max: 1, onnotice: () => {}, socket: sockets.socket } as postgres.Options<{}>);
  const bounded = <T>(work: Promise<T>) => sockets.untilStalled(work, deadlineMs);
  try {
    await bounded(migratePostgres(sql));
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
  const refuseData = async (db: postgres.Sql | postgres.TransactionSql, tables: Table[]) => {
    const used: string[] = [];
    for (const table of tables) {
      if (!SEEDED_TABLES.includes(table.name) && (await db`SELECT 1 FROM ${db(table.name)} LIMIT 1`).length)
        used.push(table.name);
    }
    if (used.length) throw holdsData(used);
  };
  return {
    tables: async () => (await bounded(postgresTables(sql))).tables,
    refuseData: (tables) => bounded(refuseData(sql, tables)),
    async copy(source, tables, secret, report, say) {
      await bounded(
        sql.begin(async (tx) => {
          await refuseData(tx, tables);
          const { types } = await postgresTables(tx);
          for (const table of tables) await tx.unsafe(`ALTER TABLE ${quote(table.name)} DISABLE TRIGGER USER`);
          for (const table of tables) {
            if (SEEDED_TABLES.includes(table.name)) await tx`DELETE FROM ${tx(table.name)}`;
            // SQLite's cells are strings, numbers, bigints, buffers or null: each one a parameter as it is
            const convert = table.columns.map((column): ((v: unknown) => PostgresCell) => {
              const type = types.get(`${table.name}.${column}`);
              if (type === 'jsonb' || type === 'json')
                return (v) => (v === null ? null : tx.json(JSON.parse(v as string)));
              if (type === 'boolean') return (v) => (v === null ? null : Boolean(v));
              return (v) => v as PostgresCell;
            });
            const size = Math.min(BATCH_ROWS, Math.floor(65_000 / table.columns.length));
            let batch: Record<string, PostgresCell>[] = [];
            let count = 0;
            const flush = async () => {
              if (batch.length) await tx`INSERT INTO ${tx(table.name)} ${tx(batch, table.columns)}`;
              count += batch.length;
              batch = [];
            };
            for (const row of rowsOf(source, table)) {
              batch.push(Object.fromEntries(table.columns.map((column, i) => [column, convert[i](row[column])])));
              if (batch.length >= size) await flush();
            }
            await flush();
            counted(report, table, count, say);
          }
          for (const table of tables) await tx.unsafe(`ALTER TABLE ${quote(table.name)} ENABLE TRIGGER USER`);
          // Serial columns continue past the copied ids (and past ids the source used for rows it deleted).
          const sequences = new Map(
            (source.prepare('SELECT name, seq FROM sqlite_sequence').all() as { name: string; seq: number }[]).map(
              (row) => [row.name, row.seq],
            ),
          );
          const serials = await tx<{ table_name: string; column_name: string; sequence: string }[]>`
          SELECT table_name, column_name, pg_get_serial_sequence(quote_ident(table_name), column_name) AS sequence
          FROM information_schema.columns WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'`;
          for (const serial of serials) {
            const [{ max }] =
              await tx`SELECT max(${tx(serial.column_name)})::bigint AS max FROM ${tx(serial.table_name)}`;
            const next = Math.max(Number(max ?? 0), sequences.get(serial.table_name) ?? 0);
            if (next > 0) await tx`SELECT setval(${serial.sequence}, ${next})`;
          }
          await tx`INSERT INTO server_secret (id, secret) VALUES (1, ${secret}) ON CONFLICT (id) DO UPDATE SET secret = excluded.secret`;
        }),
      );
    },
    // (A server past the deadline would not answer the goodbye either.)
    close: () => sql.end({ timeout: sockets.overdue ? 0 : 5 }),
  };
}
