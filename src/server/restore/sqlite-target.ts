// Restoring into another SQLite file, which becomes a data dir.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { makeDirs } from '../../shared/make-dirs.js';
import { quote, SEEDED_TABLES, sqliteTables, type Table } from '../restore-catalog.js';
import { openDatabase } from '../store/db.js';
import { counted, holdsData, RestoreError, rowsOf, type Target } from './target.js';

/** The tables the body of a trigger writes (its statements after BEGIN). */
function writtenBy(triggerSql: string): string[] {
  const body = triggerSql.slice(triggerSql.search(/\bBEGIN\b/i));
  return [
    ...body.matchAll(
      /\b(?:UPDATE(?:\s+OR\s+\w+)?|INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+"?(\w+)/gi,
    ),
  ].map((m) => m[1]);
}

/**
 * Another SQLite file, migrated by openDatabase; its dir is a data dir (the secret and admin token go
 * there, next to the archives by default). Triggers that write the copied tables (generations, the
 * rating's sum, the listed count) are dropped while rows go in and put back after, in the same transaction, so every
 * counter is the source's; those that keep the full-text indexes run, so search finds what it found.
 */
export function sqliteTarget(path: string, sourceDir: string): Target {
  const dir = dirname(path);
  if (path === join(sourceDir, 'registry.db'))
    throw new RestoreError(
      "the target database is the source's registry.db",
      'source',
      'name a new file or a PostgreSQL database',
    );
  // The dir becomes a data dir: it may hold only what a restore into it leaves (a run that failed left these).
  const own = new Set([basename(path), `${basename(path)}-wal`, `${basename(path)}-shm`, 'archives']);
  const others = existsSync(dir) ? readdirSync(dir).filter((name) => !own.has(name)) : [];
  if (others.length) {
    throw new RestoreError(
      `${dir} already holds ${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}: the target database's dir becomes a data dir, so it must be new`,
      'conflict',
      'restore into a new, empty directory, e.g. --database NEWDIR/registry.db',
    );
  }
  makeDirs(dir, 0o700);
  const db = openDatabase(path);
  const used = (tables: Table[]) =>
    tables.filter((t) => !SEEDED_TABLES.includes(t.name) && db.prepare(`SELECT 1 FROM ${quote(t.name)} LIMIT 1`).get());
  const refuseData = (tables: Table[]) => {
    const names = used(tables).map((t) => t.name);
    if (names.length) throw holdsData(names);
  };
  return {
    dataDir: dir,
    tables: async () => sqliteTables(db),
    refuseData: async (tables) => refuseData(tables),
    async copy(source, tables, _secret, report, say) {
      const copied = new Set(tables.map((t) => t.name));
      db.transaction(() => {
        refuseData(tables);
        const triggers = (
          db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").all() as {
            name: string;
            sql: string;
          }[]
        ).filter((t) => writtenBy(t.sql).some((name) => copied.has(name)));
        for (const trigger of triggers) db.exec(`DROP TRIGGER ${quote(trigger.name)}`);
        for (const table of tables) {
          if (SEEDED_TABLES.includes(table.name)) db.exec(`DELETE FROM ${quote(table.name)}`);
          const insert = db.prepare(
            `INSERT INTO ${quote(table.name)} (${table.columns.map(quote).join(', ')}) VALUES (${table.columns.map(() => '?').join(', ')})`,
          );
          let count = 0;
          for (const row of rowsOf(source, table)) {
            insert.run(...table.columns.map((c) => row[c]));
            count++;
          }
          counted(report, table, count, say);
        }
        for (const trigger of triggers) db.exec(trigger.sql);
        // AUTOINCREMENT counters as far as the source's went (past the ids of rows it deleted, too).
        for (const { name, seq } of source.prepare('SELECT name, seq FROM sqlite_sequence').all() as {
          name: string;
          seq: number;
        }[]) {
          db.prepare('DELETE FROM sqlite_sequence WHERE name = ?').run(name);
          db.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)').run(name, seq);
        }
      }).immediate();
    },
    keepFiles(secret, adminToken) {
      writeFileSync(join(dir, 'secret'), secret, { mode: 0o600, flag: 'wx' });
      if (adminToken !== undefined)
        writeFileSync(join(dir, 'admin-token'), `${adminToken}\n`, { mode: 0o600, flag: 'wx' });
    },
    async close() {
      db.close();
    },
  };
}
