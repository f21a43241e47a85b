// The archives `nodereg admin gc` collects, on SQLite (store/archive-gc.ts).
import { ARCHIVE_GC_ROWS, toArchivedVersion, type ArchiveGcStore } from '../archive-gc.js';
import { forSqlite } from '../node-classes.js';
import type { SqliteAccess } from './access.js';

export function sqliteArchiveGcStore(access: SqliteAccess): ArchiveGcStore {
  const drop = access.writing(
    (id: string, before: string) => access.prepare(forSqlite(ARCHIVE_GC_ROWS.drop)).run(id, before).changes > 0,
  );
  return {
    listArchivedVersions: async () => access.all(ARCHIVE_GC_ROWS.archived).map(toArchivedVersion),
    dropDeletedArchive: async (id, before) => drop(id, before),
  };
}
