// The node classes of versions on PostgreSQL (store/node-classes.ts): written with the archive's
// record, read by version and by name.
import type postgres from 'postgres';
import type { Extraction } from '../../../scan/node-classes/extract.js';
import { CLASS_ROWS, extractColumns, toClassRow, type NodeClassStore } from '../node-classes.js';

/** The extraction's status and reason on the version, its classes in node_classes (inside recordArchive's transaction). */
export async function writeClasses(
  tx: postgres.TransactionSql,
  id: string,
  extraction: Extraction | undefined,
): Promise<void> {
  const { status, reason } = extractColumns(extraction);
  await tx`UPDATE versions SET app_node_extract_status = ${status}, app_node_extract_reason = ${reason} WHERE id = ${id}`;
  await tx`DELETE FROM node_classes WHERE version_id = ${id}`;
  for (const found of extraction?.classes ?? []) {
    await tx`INSERT INTO node_classes (version_id, node_id, name, definition)
             SELECT id, node_id, ${found.name}, ${tx.json(found as unknown as postgres.JSONValue)} FROM versions WHERE id = ${id}`;
  }
}

export function postgresNodeClassStore(sql: postgres.Sql): NodeClassStore {
  return {
    listNodeClasses: async (versionId) => (await sql.unsafe(CLASS_ROWS.byVersion, [versionId])).map(toClassRow),
    classDefiners: async (name, limit) => (await sql.unsafe(CLASS_ROWS.definers, [name, limit])).map(toClassRow),
    async listActiveClasses({ offset, limit }) {
      const [{ n }] = await sql.unsafe(CLASS_ROWS.count);
      return { rows: (await sql.unsafe(CLASS_ROWS.page, [limit, offset])).map(toClassRow), total: Number(n) };
    },
  };
}
