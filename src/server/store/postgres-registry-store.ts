// The RegistryStore on PostgreSQL, for several server instances sharing one database. Every
// invariant is decided by the database: rows are locked (FOR UPDATE) or inserted with ON CONFLICT,
// never checked in process memory first. Loaded only when a postgres:// URL is given.
import { createPostgresTaskStore } from '../proxy/postgres-task-store.js';
import type { TaskStore } from '../proxy/store.js';
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { PUBLISHER_WRITABLE_FIELDS, VERSION_PUBLISHED_FIELDS } from '../../contract/resources.js';
import { INVITATION_SELECT, MEMBER_SELECT, toInvitation, toMember } from './member-row.js';
import { NODE_COLUMNS, nextDocument, nodeFromColumns } from './node-document.js';
import { SEARCH_VECTOR } from './postgres-migrations.js';
import { CLASS_ROWS, extractColumns, toClassRow } from './node-classes.js';
import type { Extraction } from '../../scan/node-classes/extract.js';
import { migratePostgres } from './postgres/migrate.js';

export { migratePostgres };
import { DATABASE_DEADLINE_MS, watchedSockets, withDeadline } from './postgres-deadline.js';
import type {
  MemberRole, NodeRow, NodeSort, NodeStamp, PublisherRow, RegistryStore, Reviewed, TokenRow, UserRow, VersionRow,
} from './registry-store.js';
import { LOCKED_VERSION_STATUS, STALE_CLAIM_MS, TOKEN_USE_GRANULARITY_MS } from './registry-store.js';
import { searchWords } from './search-words.js';
import { HIGHEST_FIRST, LATEST_VERSION_ID, versionOrder } from './version-order.js';
import { readVersionsInPages } from './version-pages.js';

type Sql = postgres.Sql | postgres.TransactionSql;
type Raw = Record<string, unknown>;

const now = () => new Date().toISOString();
const NODE_JSON = new Set(['tags']);
const VERSION_JSON = new Set(['dependencies', 'supported_accelerators', 'supported_os', 'tags', 'tags_admin']);
const VERSION_COLUMNS = [...VERSION_PUBLISHED_FIELDS, 'deprecated', 'status', 'status_reason'];
const PUBLISHER_COLUMNS = [...PUBLISHER_WRITABLE_FIELDS, 'status'];
/** Searches with at most this many matches are ranked (as the SQLite store's DEFAULT_RANK_LIMIT). */
const RANK_LIMIT = 2_000;

const NODE_ORDER: Record<NodeSort, string> = {
  created_at: 'created_at DESC, id',
  downloads: 'downloads DESC, id',
  rating: 'rating DESC, id',
  name: 'lower(coalesce(name, id)), id',
  search_ranking: 'search_ranking DESC NULLS LAST, id',
};
const LISTED = `status = 'NodeStatusActive' AND NOT EXISTS
  (SELECT 1 FROM publishers p WHERE p.id = nodes.publisher_id AND p.status = 'PublisherStatusBanned')`;

/**
 * Connects, migrates, and reads the server's secret (32 random bytes, created by the first instance
 * under the database's own rule: one row, inserted once).
 */
export async function connectPostgres(url: string): Promise<{ store: RegistryStore; tasks: TaskStore; secret: Buffer; close(): Promise<void> }> {
  const sockets = watchedSockets();
  // `socket` is documented in postgres.js's README ("Custom socket") but missing from its types. The
  // reconnect backoff is at most 1 s (postgres.js's grows to 20 s): the connections closed past the
  // deadline would keep a database that is back unused for that long.
  const options = { max: 10, onnotice: () => {}, socket: sockets.socket, backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1) };
  const sql = postgres(url, options as postgres.Options<{}>);
  try {
    // The migrations have no deadline: instances starting together wait for each other's.
    await migratePostgres(sql);
    await sql`INSERT INTO server_secret (id, secret) VALUES (1, ${randomBytes(32).toString('hex')}) ON CONFLICT (id) DO NOTHING`;
    const [{ secret }] = await sql`SELECT secret FROM server_secret WHERE id = 1`;
    const bounded = <T extends object>(target: T) => withDeadline(target, DATABASE_DEADLINE_MS, () => sockets.closeSilent(DATABASE_DEADLINE_MS));
    return {
      store: bounded(createPostgresRegistryStore(sql)),
      tasks: bounded(createPostgresTaskStore(sql)),
      secret: Buffer.from(secret as string, 'hex'),
      // Bounded too: a stopped server never answers the goodbye.
      close: () => sql.end({ timeout: DATABASE_DEADLINE_MS / 1000 }),
    };
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
}

export function createPostgresRegistryStore(sql: postgres.Sql): RegistryStore {
  const value = (key: string, json: Set<string>, v: unknown) => (v === undefined || v === null ? null : json.has(key) ? sql.json(v as postgres.JSONValue) : v);
  /** The changes for these columns, as a `SET` list (undefined when none). */
  const setList = (changes: Raw, allowed: readonly string[], json: Set<string>) => {
    const keys = allowed.filter((key) => changes[key] !== undefined);
    if (keys.length === 0) return undefined;
    return Object.fromEntries(keys.map((key) => [key, value(key, json, changes[key])]));
  };

  const toNode = (row: Raw | undefined): NodeRow | undefined => {
    if (!row) return undefined;
    const { metadata, seq: _seq, search: _search, ...columns } = row;
    return nodeFromColumns({ ...columns, generation: Number(columns.generation), versions_generation: Number(columns.versions_generation) }, metadata as Raw);
  };
  const toVersion = (row: Raw | undefined): VersionRow | undefined => {
    if (!row) return undefined;
    const { version_order: _order, ...columns } = row; // the store's own, never part of the row
    return { ...columns, archive_size: row.archive_size === null ? null : Number(row.archive_size) } as unknown as VersionRow;
  };
  const NODE_SELECT = 'SELECT * FROM nodes';
  /** The extraction's status and reason on the version, its classes in node_classes (in recordArchive's transaction). */
  const writeClasses = async (tx: Sql, id: string, extraction: Extraction | undefined) => {
    const { status, reason } = extractColumns(extraction);
    await tx`UPDATE versions SET app_node_extract_status = ${status}, app_node_extract_reason = ${reason} WHERE id = ${id}`;
    await tx`DELETE FROM node_classes WHERE version_id = ${id}`;
    for (const found of extraction?.classes ?? []) {
      await tx`INSERT INTO node_classes (version_id, node_id, name, definition)
               SELECT id, node_id, ${found.name}, ${tx.json(found as unknown as postgres.JSONValue)} FROM versions WHERE id = ${id}`;
    }
  };

  const getNode = async (db: Sql, id: string, lock = false) =>
    toNode((await db.unsafe(`${NODE_SELECT} WHERE lower(id) = lower($1)${lock ? ' FOR UPDATE' : ''}`, [id]))[0]);
  /**
   * The node's row before its version's: writing a version updates its node (trigger versions_touch_node),
   * and publish locks the node, then the version. In the other order an update or an upload of a version
   * published again meanwhile deadlocked (40P01, answered 500).
   */
  const lockNodeOfVersion = (db: Sql, versionId: string) => db`SELECT 1 FROM nodes WHERE id = (SELECT node_id FROM versions WHERE id = ${versionId}) FOR NO KEY UPDATE`;
  const getVersionById = async (db: Sql, id: string) => toVersion((await db`SELECT * FROM versions WHERE id = ${id}`)[0]);
  const getVersion = async (db: Sql, nodeId: string, version: string, lock = false) =>
    toVersion((await db.unsafe(`SELECT * FROM versions WHERE node_id = $1 AND version = $2${lock ? ' FOR UPDATE' : ''}`, [nodeId, version]))[0]);
  const getUser = async (db: Sql, id: string) => (await db`SELECT * FROM users WHERE id = ${id}`)[0] as UserRow | undefined;
  const getPublisher = async (db: Sql, id: string) => (await db`SELECT * FROM publishers WHERE id = ${id}`)[0] as PublisherRow | undefined;
  const getRole = async (db: Sql, publisherId: string, userId: string) =>
    (await db`SELECT role FROM members WHERE publisher_id = ${publisherId} AND user_id = ${userId}`)[0]?.role as MemberRole | undefined;
  const ownerCount = async (db: Sql, publisherId: string) =>
    (await db`SELECT count(*)::int AS n FROM members WHERE publisher_id = ${publisherId} AND role = 'owner'`)[0].n as number;
  const members = (db: Sql, publisherId: string, userId?: string) =>
    userId === undefined
      ? db.unsafe(`${MEMBER_SELECT} WHERE m.publisher_id = $1 ORDER BY m.created_at, m.id`, [publisherId])
      : db.unsafe(`${MEMBER_SELECT} WHERE m.publisher_id = $1 AND m.user_id = $2`, [publisherId, userId]);
  const TOKEN_COLUMNS = sql`id, kind, user_id, publisher_id, name, prefix, created_at, last_used_at, revoked_at`;
  const insertToken = async (db: Sql, input: Parameters<RegistryStore['createToken']>[0]) => {
    const [row] = await db`
      INSERT INTO tokens (id, kind, user_id, publisher_id, name, hash, prefix, created_at)
      VALUES (${randomUUID()}, ${input.kind}, ${input.userId}, ${input.publisherId ?? null}, ${input.name}, ${input.hash}, ${input.prefix}, ${now()})
      RETURNING ${TOKEN_COLUMNS}`;
    return row as unknown as TokenRow;
  };
  const updateNode = async (db: Sql, id: string, changes: Raw) => {
    const current = await getNode(db, id, true);
    if (!current) throw new Error(`node ${id} not found`);
    const set = setList(changes, NODE_COLUMNS, NODE_JSON) ?? {};
    const { metadata } = (await db`SELECT metadata FROM nodes WHERE id = ${current.id}`)[0] as { metadata: Raw };
    const document = nextDocument(metadata, changes);
    if (document) set.metadata = sql.json(document as postgres.JSONValue);
    if (changes.name !== undefined) set.words = searchWords(current.id, changes.name as string | null);
    if (Object.keys(set).length) await db`UPDATE nodes SET ${sql({ ...set, updated_at: now() })} WHERE id = ${current.id}`;
    return (await getNode(db, current.id))!;
  };
  const page = async (rows: Raw[], total: number) => ({ rows: rows.map((row) => toNode(row)!), total });

  return {
    async createUser(input) {
      return sql.begin(async (tx) => {
        const id = input.id ?? randomUUID();
        await tx`INSERT INTO users (id, name, email, admin, created_at) VALUES (${id}, ${input.name}, ${input.email ?? null}, ${input.admin ?? false}, ${now()})`;
        if (input.token) await insertToken(tx, { kind: 'user', userId: id, ...input.token });
        return (await getUser(tx, id))!;
      });
    },
    getUser: (id) => getUser(sql, id),
    createToken: (input) => insertToken(sql, input),
    async useToken(hash) {
      const [token] = await sql`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = ${hash} AND revoked_at IS NULL`;
      if (!token) return undefined;
      const row = token as unknown as TokenRow;
      if (!row.last_used_at || Date.now() - Date.parse(row.last_used_at) >= TOKEN_USE_GRANULARITY_MS) {
        row.last_used_at = now();
        await sql`UPDATE tokens SET last_used_at = ${row.last_used_at} WHERE id = ${row.id}`;
      }
      return { token: row, user: (await getUser(sql, row.user_id))! };
    },
    getToken: async (id) => (await sql`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = ${id}`)[0] as TokenRow | undefined,
    async listTokens(filter) {
      const rows =
        'userId' in filter
          ? await sql`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE user_id = ${filter.userId} AND kind = 'user' AND revoked_at IS NULL ORDER BY created_at, id`
          : await sql`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE publisher_id = ${filter.publisherId} AND revoked_at IS NULL ORDER BY created_at, id`;
      return rows as unknown as TokenRow[];
    },
    async tokenGeneration() {
      const [row] = await sql`SELECT value FROM generations WHERE name = 'tokens'`;
      return Number(row.value);
    },
    async revokeToken(id) {
      await sql`UPDATE tokens SET revoked_at = ${now()} WHERE id = ${id} AND revoked_at IS NULL`;
    },
    async ensureBootstrapAdmin(userId, hash, prefix, keepLive) {
      return sql.begin(async (tx) => {
        // (The admin's row is locked from here: instances starting together take turns.)
        await tx`INSERT INTO users (id, name, admin, created_at) VALUES (${userId}, 'admin', true, ${now()})
                 ON CONFLICT (id) DO UPDATE SET admin = true`;
        if (keepLive && (await tx`SELECT 1 FROM tokens WHERE user_id = ${userId} AND name = 'bootstrap' AND hash != ${hash} AND revoked_at IS NULL LIMIT 1`).length) return false;
        const [same] = await tx`SELECT id, user_id FROM tokens WHERE hash = ${hash} FOR UPDATE`;
        if (same && same.user_id !== userId) throw new Error('the admin token is already the token of another user');
        await tx`UPDATE tokens SET revoked_at = ${now()} WHERE user_id = ${userId} AND name = 'bootstrap' AND hash != ${hash} AND revoked_at IS NULL`;
        if (same) await tx`UPDATE tokens SET revoked_at = NULL WHERE id = ${same.id}`;
        else await insertToken(tx, { kind: 'user', userId, name: 'bootstrap', hash, prefix });
        return true;
      });
    },

    getPublisher: (id) => getPublisher(sql, id),
    async createPublisher(id, fields, ownerId) {
      return sql.begin(async (tx) => {
        const set = setList(fields, PUBLISHER_COLUMNS, new Set()) ?? {};
        const [created] = await tx`INSERT INTO publishers ${sql({ ...set, id, created_at: now() })} ON CONFLICT (id) DO NOTHING RETURNING id`;
        if (!created) return 'exists' as const;
        await tx`INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (${randomUUID()}, ${id}, ${ownerId}, 'owner', ${now()})`;
        return (await getPublisher(tx, id))!;
      });
    },
    async updatePublisher(id, changes) {
      const set = setList(changes, PUBLISHER_COLUMNS, new Set());
      if (set) await sql`UPDATE publishers SET ${sql(set)} WHERE id = ${id}`;
      return (await getPublisher(sql, id))!;
    },
    listMembers: async (publisherId) => (await members(sql, publisherId)).map(toMember),
    getRole: (publisherId, userId) => getRole(sql, publisherId, userId),
    publishersOfUser: async (userId) =>
      (await sql`SELECT publisher_id AS id, role FROM members WHERE user_id = ${userId} ORDER BY publisher_id`) as unknown as { id: string; role: MemberRole }[],
    async setMember(publisherId, userId, role) {
      return sql.begin(async (tx) => {
        // The publisher's row is the lock every change of its members takes: owners are counted under it.
        await tx`SELECT 1 FROM publishers WHERE id = ${publisherId} FOR UPDATE`;
        const current = await getRole(tx, publisherId, userId);
        if (current === 'owner' && role !== 'owner' && (await ownerCount(tx, publisherId)) === 1) return 'last-owner' as const;
        if (current) await tx`UPDATE members SET role = ${role} WHERE publisher_id = ${publisherId} AND user_id = ${userId}`;
        else await tx`INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (${randomUUID()}, ${publisherId}, ${userId}, ${role}, ${now()})`;
        return toMember((await members(tx, publisherId, userId))[0]);
      });
    },
    async removeMember(publisherId, userId) {
      return sql.begin(async (tx) => {
        await tx`SELECT 1 FROM publishers WHERE id = ${publisherId} FOR UPDATE`;
        const current = await getRole(tx, publisherId, userId);
        if (!current) return 'not-member' as const;
        if (current === 'owner' && (await ownerCount(tx, publisherId)) === 1) return 'last-owner' as const;
        await tx`DELETE FROM members WHERE publisher_id = ${publisherId} AND user_id = ${userId}`;
        await tx`UPDATE tokens SET revoked_at = ${now()} WHERE kind = 'pat' AND publisher_id = ${publisherId} AND user_id = ${userId} AND revoked_at IS NULL`;
        return 'removed' as const;
      });
    },
    async findUsers(text) {
      const byId = await getUser(sql, text);
      if (byId) return [byId];
      const byEmail = await sql`SELECT * FROM users WHERE lower(email) = lower(${text}) ORDER BY created_at, id LIMIT 5`;
      return (byEmail.length ? byEmail : await sql`SELECT * FROM users WHERE name = ${text} ORDER BY created_at, id LIMIT 5`) as unknown as UserRow[];
    },
    async invite(input) {
      return sql.begin(async (tx) => {
        // Under the publisher's lock, as every change of its members: an accept cannot slip in between.
        await tx`SELECT 1 FROM publishers WHERE id = ${input.publisherId} FOR UPDATE`;
        const current = await getRole(tx, input.publisherId, input.userId);
        if (current) {
          if (current === 'owner' && input.role !== 'owner' && (await ownerCount(tx, input.publisherId)) === 1) return 'last-owner' as const;
          await tx`UPDATE members SET role = ${input.role} WHERE publisher_id = ${input.publisherId} AND user_id = ${input.userId}`;
          return { kind: 'member' as const, member: toMember((await members(tx, input.publisherId, input.userId))[0]) };
        }
        await tx`INSERT INTO invitations (publisher_id, user_id, role, invited_by, created_at)
                 VALUES (${input.publisherId}, ${input.userId}, ${input.role}, ${input.invitedBy}, ${now()})
                 ON CONFLICT (publisher_id, user_id) DO UPDATE SET role = excluded.role, invited_by = excluded.invited_by`;
        const [row] = await tx.unsafe(`${INVITATION_SELECT} WHERE i.publisher_id = $1 AND i.user_id = $2`, [input.publisherId, input.userId]);
        return { kind: 'invited' as const, invitation: toInvitation(row) };
      });
    },
    listInvitations: async (filter) =>
      ('userId' in filter
        ? await sql.unsafe(`${INVITATION_SELECT} WHERE i.user_id = $1 ORDER BY i.created_at, i.publisher_id`, [filter.userId])
        : await sql.unsafe(`${INVITATION_SELECT} WHERE i.publisher_id = $1 ORDER BY i.created_at, i.user_id`, [filter.publisherId])
      ).map(toInvitation),
    async acceptInvitation(publisherId, userId) {
      return sql.begin(async (tx) => {
        await tx`SELECT 1 FROM publishers WHERE id = ${publisherId} FOR UPDATE`;
        const [invitation] = await tx`DELETE FROM invitations WHERE publisher_id = ${publisherId} AND user_id = ${userId} RETURNING role`;
        if (!invitation) return undefined;
        await tx`INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (${randomUUID()}, ${publisherId}, ${userId}, ${invitation.role}, ${now()})
                 ON CONFLICT (publisher_id, user_id) DO NOTHING`;
        return toMember((await members(tx, publisherId, userId))[0]);
      });
    },
    async removeInvitation(publisherId, userId) {
      return (await sql`DELETE FROM invitations WHERE publisher_id = ${publisherId} AND user_id = ${userId} RETURNING user_id`).length === 1;
    },

    getNode: (id) => getNode(sql, id),
    async ping() {
      await sql`SELECT 1`;
    },
    async getNodeStamp(id) {
      const [row] = await sql`SELECT id, publisher_id, status, created_at, generation FROM nodes WHERE lower(id) = lower(${id})`;
      return row && ({ ...row, generation: Number(row.generation) } as NodeStamp);
    },
    async listNodes({ sort, offset, limit }) {
      // kept by triggers (migration 'listed-count'), as on SQLite
      const [{ n }] = await sql`SELECT value::int AS n FROM counts WHERE name = 'listed_nodes'`;
      // The page's rows are chosen in the index (migration 'listing-covering-indexes'), then read.
      const order = NODE_ORDER[sort];
      const chosen = `SELECT seq FROM nodes WHERE ${LISTED} ORDER BY ${order} LIMIT $1 OFFSET $2`;
      return page(await sql.unsafe(`${NODE_SELECT} WHERE seq IN (${chosen}) ORDER BY ${order}`, [limit, offset]), n as number);
    },
    async searchNodes({ terms, offset, limit }) {
      // Each term matches as a prefix of a word; the words are those the 'simple' configuration makes.
      const words = terms.flatMap((term) => term.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
      if (words.length === 0) return { rows: [], total: 0 };
      const query = words.map((word) => `${word}:*`).join(' & ');
      const matches = `(${SEARCH_VECTOR}) @@ to_tsquery('simple', $1)`;
      const [{ n }] = await sql.unsafe(`SELECT count(*)::int AS n FROM nodes WHERE ${LISTED} AND ${matches}`, [query]);
      // Ranking costs per match: a term that matches more than RANK_LIMIT nodes says little by itself,
      // and its matches come newest first (at 100,000 nodes: ~1 ms instead of ~50).
      const order = (n as number) <= RANK_LIMIT ? `ts_rank((${SEARCH_VECTOR}), to_tsquery('simple', $1)) DESC, seq` : 'seq DESC';
      const rows = await sql.unsafe(
        `${NODE_SELECT} WHERE ${LISTED} AND ${matches} ORDER BY ${order} LIMIT $2 OFFSET $3`,
        [query, limit, offset],
      );
      return page(rows, n as number);
    },
    listPublisherNodes: async (publisherId, { statuses, offset, limit }) =>
      // The page's rows are chosen in the index (migration 'publisher-nodes-index'), then read.
      (await sql`SELECT * FROM nodes WHERE seq IN (
        SELECT seq FROM nodes WHERE publisher_id = ${publisherId} AND status = ANY(${sql.array([...statuses])}::text[]) ORDER BY id LIMIT ${limit} OFFSET ${offset}
      ) ORDER BY id`).map((row) => toNode(row)!),
    updateNode: (id, changes) =>
      sql.begin(async (tx) => {
        // the publisher before the node, as publish and a ban take them
        await tx`SELECT 1 FROM publishers WHERE id = (SELECT publisher_id FROM nodes WHERE lower(id) = lower(${id})) FOR SHARE`;
        return updateNode(tx, id, changes);
      }),
    async countDownload(nodeId) {
      await sql`UPDATE nodes SET downloads = downloads + 1 WHERE id = ${nodeId}`;
    },
    async review(nodeId, userId, star) {
      // The node's row is locked first, so the generation before and after are this review's alone; the
      // trigger reviews_rating keeps the node's sum and count. The three statements are pipelined.
      const stamp = now();
      const [[before], , [node]] = await sql.begin((tx) => [
        tx`SELECT generation FROM nodes WHERE id = ${nodeId} FOR UPDATE`,
        tx`INSERT INTO reviews (node_id, user_id, star, created_at, updated_at) VALUES (${nodeId}, ${userId}, ${star}, ${stamp}, ${stamp})
           ON CONFLICT (node_id, user_id) DO UPDATE SET star = excluded.star, updated_at = excluded.updated_at`,
        tx`SELECT id, publisher_id, status, created_at, generation, rating FROM nodes WHERE id = ${nodeId}`,
      ]);
      return { node: { ...node, generation: Number(node.generation) } as Reviewed['node'], previousGeneration: Number(before.generation) };
    },

    listVersions: (nodeId) =>
      readVersionsInPages({
        generation: async () => (await sql`SELECT versions_generation FROM nodes WHERE id = ${nodeId}`)[0]?.versions_generation,
        orderedIds: async () => (await sql`SELECT id FROM versions WHERE node_id = ${nodeId} ORDER BY ${sql.unsafe(HIGHEST_FIRST)}`).map((row) => row.id as string),
        rows: async (ids) => (await sql`SELECT * FROM versions WHERE id = ANY(${sql.array(ids)}::text[])`).map((row) => toVersion(row)!),
        all: async () => (await sql`SELECT * FROM versions WHERE node_id = ${nodeId} ORDER BY ${sql.unsafe(HIGHEST_FIRST)}`).map((row) => toVersion(row)!),
      }),
    async latestVersions(nodeIds) {
      if (nodeIds.length === 0) return [];
      const rows = await sql`SELECT * FROM versions WHERE id IN (SELECT ${sql.unsafe(LATEST_VERSION_ID)} FROM unnest(${sql.array(nodeIds)}::text[]) AS n(value))`;
      return rows.map((row) => toVersion(row)!);
    },
    getVersionById: (id) => getVersionById(sql, id),
    getVersion: (nodeId, version) => getVersion(sql, nodeId, version),
    async publish(input) {
      return sql.begin(async (tx) => {
        // The publisher before the node, as a ban takes them (its row, then its nodes' rows): a node's
        // status change locks its publisher too (trigger nodes_count_listed), and in the other order a
        // ban and a publish that revives a Deleted node waited for each other (40P01, answered 500).
        await tx`SELECT 1 FROM publishers WHERE id = ${input.publisherId} FOR SHARE`;
        let existing = await getNode(tx, input.nodeId, true);
        if (!existing) {
          const stamp = now();
          const fields = { ...input.nodeDefaults, ...input.node };
          const set = setList({ status: 'NodeStatusActive', ...fields }, NODE_COLUMNS, NODE_JSON) ?? {};
          const document = nextDocument({}, fields) ?? {};
          const [inserted] = await tx`
            INSERT INTO nodes ${sql({ ...set, metadata: sql.json(document as postgres.JSONValue), words: searchWords(input.nodeId, fields.name), id: input.nodeId, publisher_id: input.publisherId, created_at: stamp, updated_at: stamp })}
            ON CONFLICT DO NOTHING RETURNING id`;
          // Lost a race to create it: the winner's node, locked, is decided on like any existing one.
          if (!inserted) existing = await getNode(tx, input.nodeId, true);
        }
        if (existing && existing.publisher_id !== input.publisherId) return { kind: 'other-publisher' as const, publisherId: existing.publisher_id };
        const node = existing
          ? await updateNode(tx, existing.id, { ...input.node, ...(existing.status === 'NodeStatusDeleted' ? { status: 'NodeStatusActive' } : {}) })
          : (await getNode(tx, input.nodeId))!;

        const pending = Object.fromEntries(VERSION_PUBLISHED_FIELDS.map((key) => [key, value(key, VERSION_JSON, input.pending[key])]));
        let current = await getVersion(tx, node.id, input.version, true);
        if (!current) {
          const id = randomUUID();
          const [inserted] = await tx`
            INSERT INTO versions ${sql({ ...pending, id, node_id: node.id, version: input.version, version_order: versionOrder(input.version), created_at: now() })}
            ON CONFLICT (node_id, version) DO NOTHING RETURNING id`;
          if (inserted) return { kind: 'created' as const, node, version: (await getVersionById(tx, id))! };
          current = (await getVersion(tx, node.id, input.version, true))!;
        }
        if (current.uploaded_at) return { kind: 'archive-exists' as const, version: current };
        if (LOCKED_VERSION_STATUS.includes(current.status)) return { kind: 'status-locked' as const, version: current };
        await tx`UPDATE versions SET ${sql({ ...pending, status: 'NodeVersionStatusPending' })} WHERE id = ${current.id}`;
        return { kind: 'retried' as const, node, version: (await getVersionById(tx, current.id))! };
      });
    },
    async updateVersion(id, changes) {
      const set = setList(changes, VERSION_COLUMNS, VERSION_JSON);
      if (set) {
        await sql.begin(async (tx) => {
          await lockNodeOfVersion(tx, id);
          await tx`UPDATE versions SET ${sql(set)} WHERE id = ${id}`;
        });
      }
      return (await getVersionById(sql, id))!;
    },
    async claimArchive(id, key) {
      return sql.begin(async (tx) => {
        const [open] = await tx`SELECT 1 FROM versions WHERE id = ${id} AND archive_sha256 IS NULL AND status = 'NodeVersionStatusPending' FOR UPDATE`;
        if (!open) return false;
        const stale = new Date(Date.now() - STALE_CLAIM_MS).toISOString();
        const [claimed] = await tx`
          INSERT INTO archive_claims (version_id, key, created_at) VALUES (${id}, ${key}, ${now()})
          ON CONFLICT (version_id) DO UPDATE SET key = excluded.key, created_at = excluded.created_at WHERE archive_claims.created_at < ${stale}
          RETURNING version_id`;
        return claimed !== undefined;
      });
    },
    async releaseArchive(id) {
      await sql`DELETE FROM archive_claims WHERE version_id = ${id}`;
    },
    listArchiveClaims: async () =>
      (await sql`SELECT version_id, key, created_at FROM archive_claims ORDER BY created_at`) as unknown as { version_id: string; key: string; created_at: string }[],
    listNodeClasses: async (versionId) => (await sql.unsafe(CLASS_ROWS.byVersion, [versionId])).map(toClassRow),
    classDefiners: async (name, limit) => (await sql.unsafe(CLASS_ROWS.definers, [name, limit])).map(toClassRow),
    async listActiveClasses({ offset, limit }) {
      const [{ n }] = await sql.unsafe(CLASS_ROWS.count);
      return { rows: (await sql.unsafe(CLASS_ROWS.page, [limit, offset])).map(toClassRow), total: Number(n) };
    },
    async recordArchive(id, archive) {
      return sql.begin(async (tx) => {
        await lockNodeOfVersion(tx, id);
        const findings = archive.findings ? tx.json(archive.findings as unknown as postgres.JSONValue) : null;
        await tx`UPDATE versions SET archive_sha256 = ${archive.sha256}, archive_size = ${archive.size}, uploaded_at = ${now()}, findings = ${findings},
                   status_reason = CASE status WHEN 'NodeVersionStatusPending' THEN coalesce(${archive.statusReason ?? null}, status_reason) ELSE status_reason END,
                   status = CASE status WHEN 'NodeVersionStatusPending' THEN ${archive.status} ELSE status END WHERE id = ${id}`;
        await tx`DELETE FROM archive_claims WHERE version_id = ${id}`;
        await writeClasses(tx, id, archive.classes);
        return (await getVersionById(tx, id))!;
      });
    },
  };
}
