// What `nodereg admin gc` asks of the store (DESIGN.md §16): every version that has an archive, with
// when its status last changed (migration 'version-status-changed'), and the step that lets go of a
// Deleted version's archive. Shared by both stores: the SQL here is read by SQLite and PostgreSQL alike.

/** A version whose archive is in the storage. */
export interface ArchivedVersion {
  id: string;
  publisher_id: string;
  node_id: string;
  version: string;
  status: string;
  /** When its status last changed; its upload (or creation) for a version older than the column. */
  status_changed_at: string;
}

export interface ArchiveGcStore {
  /** Every version that has an archive (archive_sha256 set). */
  listArchivedVersions(): Promise<ArchivedVersion[]>;
  /**
   * Forgets the archive of version `id` when it is Deleted since before `before` (ISO time): its
   * sha256, size and upload time become NULL, so nothing serves, backs up or revives it. False when
   * the version no longer is such (made Active again meanwhile, or already collected).
   */
  dropDeletedArchive(id: string, before: string): Promise<boolean>;
}

const CHANGED_AT = 'COALESCE(v.status_changed_at, v.uploaded_at, v.created_at)';

export const ARCHIVE_GC_ROWS = {
  archived: `SELECT v.id, n.publisher_id, v.node_id, v.version, v.status, ${CHANGED_AT} AS status_changed_at
    FROM versions v JOIN nodes n ON n.id = v.node_id WHERE v.archive_sha256 IS NOT NULL`,
  drop: `UPDATE versions SET archive_sha256 = NULL, archive_size = NULL, uploaded_at = NULL
    WHERE id = $1 AND archive_sha256 IS NOT NULL AND status = 'NodeVersionStatusDeleted'
    AND COALESCE(status_changed_at, uploaded_at, created_at) < $2`,
} as const;

export const toArchivedVersion = (row: Record<string, unknown>): ArchivedVersion => ({
  id: String(row.id),
  publisher_id: String(row.publisher_id),
  node_id: String(row.node_id),
  version: String(row.version),
  status: String(row.status),
  status_changed_at: String(row.status_changed_at),
});
