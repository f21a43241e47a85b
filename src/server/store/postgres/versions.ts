// Versions and their archives on PostgreSQL, and publish, which writes a node and one of its versions
// in one transaction. Every invariant is decided by the database: rows are locked (FOR UPDATE) or
// inserted with ON CONFLICT, never checked in process memory first.
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { writeClasses } from './node-classes.js';
import { VERSION_PUBLISHED_FIELDS } from '../../../contract/resources.js';
import type {
  ArchiveRecord,
  NodeRow,
  PublishInput,
  PublishOutcome,
  RegistryStore,
  VersionChanges,
} from '../registry-store.js';
import { LOCKED_VERSION_STATUS, STALE_CLAIM_MS } from '../registry-store.js';
import { lookalikeForm, NODE_LOOKALIKE } from '../lookalike.js';
import { count, decodeClaim, decodeVersion, first, only, text } from '../rows.js';
import { HIGHEST_FIRST, LATEST_VERSION_ID, versionOrder } from '../version-order.js';
import { readVersionsInPages } from '../version-pages.js';
import { columnValue, now, setList, type Sql } from './columns.js';
import { getNode, insertNode, updateNode } from './nodes.js';

const VERSION_JSON = new Set(['dependencies', 'supported_accelerators', 'supported_os', 'tags', 'tags_admin']);
const VERSION_COLUMNS = [...VERSION_PUBLISHED_FIELDS, 'deprecated', 'status', 'status_reason'];

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

const getVersionById = async (db: Sql, id: string) =>
  first(await db`SELECT * FROM versions WHERE id = ${id}`, decodeVersion);

/** A version this transaction has just written. */
const writtenVersion = async (db: Sql, id: string) =>
  only(await db`SELECT * FROM versions WHERE id = ${id}`, decodeVersion, `version ${id}`);

const getVersion = async (db: Sql, nodeId: string, version: string, lock = false) =>
  first(
    await db.unsafe(`SELECT * FROM versions WHERE node_id = $1 AND version = $2${lock ? ' FOR UPDATE' : ''}`, [
      nodeId,
      version,
    ]),
    decodeVersion,
  );

/**
 * The node's row before its version's: writing a version updates its node (trigger versions_touch_node),
 * and publish locks the node, then the version. In the other order an update or an upload of a version
 * published again meanwhile deadlocked (40P01, answered 500).
 */
const lockNodeOfVersion = (tx: Sql, versionId: string) =>
  tx`SELECT 1 FROM nodes WHERE id = (SELECT node_id FROM versions WHERE id = ${versionId}) FOR NO KEY UPDATE`;

/** The publish's node, locked: created, or updated by its own publisher (a Deleted one comes back). */
async function publishedNode(
  tx: Sql,
  input: PublishInput,
): Promise<NodeRow | Exclude<PublishOutcome, { node: NodeRow }>> {
  let existing = await getNode(tx, input.nodeId, true);
  if (!existing) {
    const [lookalike] = await tx.unsafe(
      `SELECT id, publisher_id FROM nodes WHERE ${NODE_LOOKALIKE} = $1 AND publisher_id <> $2 LIMIT 1`,
      [lookalikeForm(input.nodeId), input.publisherId],
    );
    if (lookalike)
      return { kind: 'look-alike', nodeId: text(lookalike, 'id'), publisherId: text(lookalike, 'publisher_id') };
    const created = await insertNode(tx, input.nodeId, input.publisherId, { ...input.nodeDefaults, ...input.node });
    if (created) return created;
    // Lost a race to create it: the winner's node, locked, is decided on like any existing one.
    existing = await getNode(tx, input.nodeId, true);
    if (!existing) throw new Error(`node ${input.nodeId} was neither created nor found`);
  }
  if (existing.publisher_id !== input.publisherId)
    return { kind: 'other-publisher', publisherId: existing.publisher_id };
  return updateNode(tx, existing.id, {
    ...input.node,
    ...(existing.status === 'NodeStatusDeleted' ? { status: 'NodeStatusActive' } : {}),
  });
}

function publish(sql: postgres.Sql, input: PublishInput): Promise<PublishOutcome> {
  return sql.begin(async (tx): Promise<PublishOutcome> => {
    // The publisher before the node, as a ban takes them (its row, then its nodes' rows): a node's
    // status change locks its publisher too (trigger nodes_count_listed), and in the other order a
    // ban and a publish that revives a Deleted node waited for each other (40P01, answered 500).
    await tx`SELECT 1 FROM publishers WHERE id = ${input.publisherId} FOR SHARE`;
    const node = await publishedNode(tx, input);
    if ('kind' in node) return node;
    const pending = Object.fromEntries(
      VERSION_PUBLISHED_FIELDS.map((key) => [key, columnValue(tx, VERSION_JSON.has(key), input.pending[key])]),
    );
    let current = await getVersion(tx, node.id, input.version, true);
    if (!current) {
      const id = randomUUID();
      const [inserted] = await tx`
        INSERT INTO versions ${tx({ ...pending, id, node_id: node.id, version: input.version, version_order: versionOrder(input.version), created_at: now() })}
        ON CONFLICT (node_id, version) DO NOTHING RETURNING id`;
      if (inserted) return { kind: 'created', node, version: await writtenVersion(tx, id) };
      current = await getVersion(tx, node.id, input.version, true);
      if (!current) throw new Error(`version ${input.version} of ${node.id} was neither created nor found`);
    }
    if (current.uploaded_at) return { kind: 'archive-exists', version: current };
    if (LOCKED_VERSION_STATUS.includes(current.status)) return { kind: 'status-locked', version: current };
    await tx`UPDATE versions SET ${tx({ ...pending, status: 'NodeVersionStatusPending' })} WHERE id = ${current.id}`;
    return { kind: 'retried', node, version: await writtenVersion(tx, current.id) };
  });
}

async function updateVersion(sql: postgres.Sql, id: string, changes: VersionChanges) {
  const set = setList(sql, changes, VERSION_COLUMNS, VERSION_JSON);
  if (set) {
    await sql.begin(async (tx) => {
      await lockNodeOfVersion(tx, id);
      await tx`UPDATE versions SET ${tx(set)} WHERE id = ${id}`;
    });
  }
  return writtenVersion(sql, id);
}

/** The "already uploaded" decision (RegistryStore.claimArchive); a claim older than STALE_CLAIM_MS is taken over. */
function claimArchive(sql: postgres.Sql, id: string, key: string) {
  return sql.begin(async (tx) => {
    const [open] =
      await tx`SELECT 1 FROM versions WHERE id = ${id} AND archive_sha256 IS NULL AND status = 'NodeVersionStatusPending' FOR UPDATE`;
    if (!open) return false;
    const stale = new Date(Date.now() - STALE_CLAIM_MS).toISOString();
    const [claimed] = await tx`
      INSERT INTO archive_claims (version_id, key, created_at) VALUES (${id}, ${key}, ${now()})
      ON CONFLICT (version_id) DO UPDATE SET key = excluded.key, created_at = excluded.created_at WHERE archive_claims.created_at < ${stale}
      RETURNING version_id`;
    return claimed !== undefined;
  });
}

function recordArchive(sql: postgres.Sql, id: string, archive: ArchiveRecord) {
  return sql.begin(async (tx) => {
    await lockNodeOfVersion(tx, id);
    const findings = archive.findings ? tx.json(archive.findings as unknown as postgres.JSONValue) : null;
    await tx`UPDATE versions SET archive_sha256 = ${archive.sha256}, archive_size = ${archive.size}, uploaded_at = ${now()}, findings = ${findings}, provenance = ${archive.provenance ?? null},
               status_reason = CASE status WHEN 'NodeVersionStatusPending' THEN coalesce(${archive.statusReason ?? null}, status_reason) ELSE status_reason END,
               status = CASE status WHEN 'NodeVersionStatusPending' THEN ${archive.status} ELSE status END WHERE id = ${id}`;
    await tx`DELETE FROM archive_claims WHERE version_id = ${id}`;
    await writeClasses(tx, id, archive.classes);
    return writtenVersion(tx, id);
  });
}

function listVersions(sql: postgres.Sql, nodeId: string) {
  return readVersionsInPages({
    generation: async () =>
      (await sql`SELECT versions_generation FROM nodes WHERE id = ${nodeId}`)[0]?.versions_generation,
    orderedIds: async () =>
      (await sql`SELECT id FROM versions WHERE node_id = ${nodeId} ORDER BY ${sql.unsafe(HIGHEST_FIRST)}`).map((row) =>
        text(row, 'id'),
      ),
    rows: async (ids) =>
      (await sql`SELECT * FROM versions WHERE id = ANY(${sql.array(ids)}::text[])`).map(decodeVersion),
    all: async () =>
      (await sql`SELECT * FROM versions WHERE node_id = ${nodeId} ORDER BY ${sql.unsafe(HIGHEST_FIRST)}`).map(
        decodeVersion,
      ),
  });
}

export function postgresVersionStore(sql: postgres.Sql): VersionStore {
  return {
    listVersions: (nodeId) => listVersions(sql, nodeId),
    async latestVersions(nodeIds) {
      if (nodeIds.length === 0) return [];
      const rows =
        await sql`SELECT * FROM versions WHERE id IN (SELECT ${sql.unsafe(LATEST_VERSION_ID)} FROM unnest(${sql.array(nodeIds)}::text[]) AS n(value))`;
      return rows.map(decodeVersion);
    },
    getVersionById: (id) => getVersionById(sql, id),
    getVersion: (nodeId, version) => getVersion(sql, nodeId, version),
    countPendingVersions: async (publisherId) =>
      only(
        await sql.unsafe(
          "SELECT count(*) AS n FROM versions WHERE status = 'NodeVersionStatusPending' AND archive_sha256 IS NULL AND node_id IN (SELECT id FROM nodes WHERE publisher_id = $1)",
          [publisherId],
        ),
        (row) => count(row, 'n'),
        'pending versions',
      ),
    publish: (input) => publish(sql, input),
    updateVersion: (id, changes) => updateVersion(sql, id, changes),
    claimArchive: (id, key) => claimArchive(sql, id, key),
    async releaseArchive(id) {
      await sql`DELETE FROM archive_claims WHERE version_id = ${id}`;
    },
    async renewArchiveClaim(id, key) {
      await sql`UPDATE archive_claims SET created_at = ${now()} WHERE version_id = ${id} AND key = ${key}`;
    },
    listArchiveClaims: async () =>
      (await sql`SELECT version_id, key, created_at FROM archive_claims ORDER BY created_at`).map(decodeClaim),
    recordArchive: (id, archive) => recordArchive(sql, id, archive),
  };
}
