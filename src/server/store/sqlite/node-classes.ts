// The node classes of versions on SQLite (store/node-classes.ts): written with the archive's record,
// read by version and by name.
import type { Extraction } from '../../../scan/node-classes/extract.js';
import { CLASS_ROWS, extractColumns, forSqlite, toClassRow, type NodeClassStore } from '../node-classes.js';
import type { SqliteAccess } from './access.js';

/** The extraction's status and reason on the version, its classes in node_classes (inside recordArchive's transaction). */
export function writeClasses(access: SqliteAccess, id: string, extraction: Extraction | undefined): void {
  const { status, reason } = extractColumns(extraction);
  access
    .prepare('UPDATE versions SET app_node_extract_status = ?, app_node_extract_reason = ? WHERE id = ?')
    .run(status, reason, id);
  access.prepare('DELETE FROM node_classes WHERE version_id = ?').run(id);
  const insert = access.prepare(forSqlite(CLASS_ROWS.insert));
  for (const found of extraction?.classes ?? []) insert.run(found.name, JSON.stringify(found), id);
}

export function sqliteNodeClassStore(access: SqliteAccess): NodeClassStore {
  return {
    listNodeClasses: async (versionId) => access.all(forSqlite(CLASS_ROWS.byVersion), versionId).map(toClassRow),
    classDefiners: async (name, limit) => access.all(forSqlite(CLASS_ROWS.definers), name, limit).map(toClassRow),
    async listActiveClasses({ offset, limit }) {
      const total = Number(access.one(CLASS_ROWS.count)?.n ?? 0);
      return { rows: access.all(forSqlite(CLASS_ROWS.page), limit, offset).map(toClassRow), total };
    },
  };
}
