// Versions and their archives on SQLite, and publish, which writes a node and one of its versions in
// one transaction.
import { randomUUID } from 'node:crypto';
import { VERSION_PUBLISHED_FIELDS } from '../../../contract/resources.js';
import type {
  ArchiveRecord,
  NodeRow,
  PublishInput,
  PublishOutcome,
  RegistryStore,
  VersionChanges,
  VersionRow,
} from '../registry-store.js';
import { LOCKED_VERSION_STATUS, STALE_CLAIM_MS } from '../registry-store.js';
import { lookalikeForm, NODE_LOOKALIKE } from '../lookalike.js';
import { count, decodeClaim, decodeVersion, first, only, text } from '../rows.js';
import { HIGHEST_FIRST, LATEST_VERSION_ID, versionOrder } from '../version-order.js';
import { readVersionsInPages } from '../version-pages.js';
import { assignments, encode, now, type SqliteAccess } from './access.js';
import { writeClasses } from './node-classes.js';
import { getNode, insertNode, updateNode } from './nodes.js';

// Columns holding lists, stored as JSON text.
const VERSION_JSON = new Set([
  'dependencies',
  'supported_accelerators',
  'supported_os',
  'tags',
  'tags_admin',
  'findings',
]);
const VERSION_COLUMNS = [...VERSION_PUBLISHED_FIELDS, 'deprecated', 'status', 'status_reason'] as const;

type VersionStore = Pick<
  RegistryStore,
  | 'listVersions'
  | 'latestVersions'
  | 'getVersionById'
  | 'getVersion'
  | 'countPendingVersions'
  | 'publish'
  | 'updateVersion'
  | 'claimArchive'
  | 'releaseArchive'
  | 'renewArchiveClaim'
  | 'listArchiveClaims'
  | 'recordArchive'
>;

const getVersionById = (access: SqliteAccess, id: string) =>
  first(access.all('SELECT * FROM versions WHERE id = ?', id), decodeVersion);

/** A version this transaction has just written. */
const writtenVersion = (access: SqliteAccess, id: string) =>
  only(access.all('SELECT * FROM versions WHERE id = ?', id), decodeVersion, `version ${id}`);

const getVersion = (access: SqliteAccess, nodeId: string, version: string) =>
  first(access.all('SELECT * FROM versions WHERE node_id = ? AND version = ?', nodeId, version), decodeVersion);

/** The publish's node: created, or updated by its own publisher (a Deleted one comes back); undefined when another publisher's. */
function publishedNode(
  access: SqliteAccess,
  input: PublishInput,
): NodeRow | Exclude<PublishOutcome, { node: NodeRow }> {
  const existing = getNode(access, input.nodeId);
  if (!existing) {
    const lookalike = first(
      access.all(
        `SELECT id, publisher_id FROM nodes WHERE ${NODE_LOOKALIKE} = ? AND publisher_id <> ? LIMIT 1`,
        lookalikeForm(input.nodeId),
        input.publisherId,
      ),
      (row) => ({ kind: 'look-alike' as const, nodeId: text(row, 'id'), publisherId: text(row, 'publisher_id') }),
    );
    return lookalike ?? insertNode(access, input.nodeId, input.publisherId, { ...input.nodeDefaults, ...input.node });
  }
  if (existing.publisher_id !== input.publisherId)
    return { kind: 'other-publisher', publisherId: existing.publisher_id };
  const reactivate = existing.status === 'NodeStatusDeleted' ? { status: 'NodeStatusActive' as const } : {};
  return updateNode(access, existing.id, { ...input.node, ...reactivate });
}

function publish(access: SqliteAccess, input: PublishInput): PublishOutcome {
  const node = publishedNode(access, input);
  if ('kind' in node) return node;
  const current = getVersion(access, node.id, input.version);
  if (current?.uploaded_at) return { kind: 'archive-exists', version: current };
  if (current && LOCKED_VERSION_STATUS.includes(current.status)) return { kind: 'status-locked', version: current };
  const pending = Object.fromEntries(
    Object.entries(input.pending).map(([key, value]) => [key, encode(value, VERSION_JSON.has(key))]),
  );
  if (current) {
    access
      .prepare(
        `UPDATE versions SET ${VERSION_PUBLISHED_FIELDS.map((f) => `${f} = @${f}`).join(', ')}, status = 'NodeVersionStatusPending' WHERE id = @id`,
      )
      .run({ ...pending, id: current.id });
    return { kind: 'retried', node, version: writtenVersion(access, current.id) };
  }
  const id = randomUUID();
  access
    .prepare(
      `INSERT INTO versions (id, node_id, version, version_order, created_at, ${VERSION_PUBLISHED_FIELDS.join(', ')})
     VALUES (@id, @node_id, @version, @version_order, @created_at, ${VERSION_PUBLISHED_FIELDS.map((f) => `@${f}`).join(', ')})`,
    )
    .run({
      ...pending,
      id,
      node_id: node.id,
      version: input.version,
      version_order: versionOrder(input.version),
      created_at: now(),
    });
  return { kind: 'created', node, version: writtenVersion(access, id) };
}

function updateVersion(access: SqliteAccess, id: string, changes: VersionChanges): VersionRow {
  const set = assignments(changes, VERSION_COLUMNS, VERSION_JSON);
  if (!set.empty) access.prepare(`UPDATE versions SET ${set.sql} WHERE id = @id`).run({ ...set.values, id });
  return writtenVersion(access, id);
}

/** The "already uploaded" decision (RegistryStore.claimArchive); a claim older than STALE_CLAIM_MS is taken over. */
function claimArchive(access: SqliteAccess, id: string, key: string): boolean {
  if (
    !access.one(
      "SELECT 1 FROM versions WHERE id = ? AND archive_sha256 IS NULL AND status = 'NodeVersionStatusPending'",
      id,
    )
  )
    return false;
  const stale = new Date(Date.now() - STALE_CLAIM_MS).toISOString();
  const claim = access.prepare(
    `INSERT INTO archive_claims (version_id, key, created_at) VALUES (?, ?, ?)
     ON CONFLICT (version_id) DO UPDATE SET key = excluded.key, created_at = excluded.created_at WHERE archive_claims.created_at < ?`,
  );
  return claim.run(id, key, now(), stale).changes === 1;
}

function recordArchive(access: SqliteAccess, id: string, archive: ArchiveRecord): VersionRow {
  access
    .prepare(
      `UPDATE versions SET archive_sha256 = ?, archive_size = ?, uploaded_at = ?, findings = ?, provenance = ?,
       status_reason = CASE status WHEN 'NodeVersionStatusPending' THEN coalesce(?, status_reason) ELSE status_reason END,
       status = CASE status WHEN 'NodeVersionStatusPending' THEN ? ELSE status END WHERE id = ?`,
    )
    .run(
      archive.sha256,
      archive.size,
      now(),
      archive.findings ? JSON.stringify(archive.findings) : null,
      archive.provenance ?? null,
      archive.statusReason ?? null,
      archive.status,
      id,
    );
  access.prepare('DELETE FROM archive_claims WHERE version_id = ?').run(id);
  writeClasses(access, id, archive.classes);
  return writtenVersion(access, id);
}

function listVersions(access: SqliteAccess, nodeId: string): Promise<VersionRow[]> {
  const ordered = `FROM versions WHERE node_id = ? ORDER BY ${HIGHEST_FIRST}`;
  return readVersionsInPages({
    generation: async () =>
      access.one('SELECT versions_generation FROM nodes WHERE id = ?', nodeId)?.versions_generation,
    orderedIds: async () => access.all(`SELECT id ${ordered}`, nodeId).map((row) => text(row, 'id')),
    rows: async (ids) =>
      access
        .all('SELECT * FROM versions WHERE id IN (SELECT value FROM json_each(?))', JSON.stringify(ids))
        .map(decodeVersion),
    all: async () => access.all(`SELECT * ${ordered}`, nodeId).map(decodeVersion),
  });
}

export function sqliteVersionStore(access: SqliteAccess): VersionStore {
  const { writing } = access;
  const publishing = writing((input: PublishInput) => publish(access, input));
  const claiming = writing((id: string, key: string) => claimArchive(access, id, key));
  const recording = writing((id: string, archive: ArchiveRecord) => recordArchive(access, id, archive));
  return {
    listVersions: (nodeId) => listVersions(access, nodeId),
    async latestVersions(nodeIds) {
      if (nodeIds.length === 0) return [];
      const latest = `SELECT * FROM versions WHERE id IN (SELECT ${LATEST_VERSION_ID} FROM json_each(?) AS n)`;
      return access.all(latest, JSON.stringify(nodeIds)).map(decodeVersion);
    },
    getVersionById: async (id) => getVersionById(access, id),
    getVersion: async (nodeId, version) => getVersion(access, nodeId, version),
    countPendingVersions: async (publisherId) =>
      only(
        access.all(
          "SELECT count(*) AS n FROM versions WHERE status = 'NodeVersionStatusPending' AND archive_sha256 IS NULL AND node_id IN (SELECT id FROM nodes WHERE publisher_id = ?)",
          publisherId,
        ),
        (row) => count(row, 'n'),
        'pending versions',
      ),
    publish: async (input) => publishing(input),
    updateVersion: async (id, changes) => updateVersion(access, id, changes),
    claimArchive: async (id, key) => claiming(id, key),
    async releaseArchive(id) {
      access.prepare('DELETE FROM archive_claims WHERE version_id = ?').run(id);
    },
    async renewArchiveClaim(id, key) {
      access.prepare('UPDATE archive_claims SET created_at = ? WHERE version_id = ? AND key = ?').run(now(), id, key);
    },
    listArchiveClaims: async () =>
      access.all('SELECT version_id, key, created_at FROM archive_claims ORDER BY created_at').map(decodeClaim),
    recordArchive: async (id, archive) => recording(id, archive),
  };
}
