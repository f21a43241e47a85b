// The archives `nodereg admin gc` collects, on PostgreSQL (store/archive-gc.ts).
import type postgres from 'postgres';
import { ARCHIVE_GC_ROWS, toArchivedVersion, type ArchiveGcStore } from '../archive-gc.js';

export function postgresArchiveGcStore(sql: postgres.Sql): ArchiveGcStore {
  return {
    listArchivedVersions: async () => (await sql.unsafe(ARCHIVE_GC_ROWS.archived)).map(toArchivedVersion),
    dropDeletedArchive: async (id, before) => (await sql.unsafe(ARCHIVE_GC_ROWS.drop, [id, before])).count > 0,
  };
}
