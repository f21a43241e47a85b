import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { PUBLISHER_WRITABLE_FIELDS, VERSION_PUBLISHED_FIELDS } from '../../contract/resources.js';
import { INVITATION_SELECT, MEMBER_SELECT, toInvitation, toMember } from './member-row.js';
import { NODE_COLUMNS, nextDocument, nodeFromColumns } from './node-document.js';
import type { Db } from './db.js';
import type {
  MemberRole, MemberRow, NodeFields, NodeRow, NodeSort, NodeStamp, Page, PublisherFields, PublisherRow, PublishInput,
  ArchiveRecord, PublishOutcome, RegistryStore, Reviewed, TokenRow, UserRow, VersionChanges, VersionRow, VersionStatus,
} from './registry-store.js';
import { LOCKED_VERSION_STATUS, STALE_CLAIM_MS, TOKEN_USE_GRANULARITY_MS } from './registry-store.js';
import { searchWords } from './search-words.js';
import { CLASS_ROWS, extractColumns, forSqlite, toClassRow } from './node-classes.js';
import { HIGHEST_FIRST, LATEST_VERSION_ID, versionOrder } from './version-order.js';
import { readVersionsInPages } from './version-pages.js';

const now = () => new Date().toISOString();
type Raw = Record<string, unknown>;

// Columns holding lists, stored as JSON text.
const NODE_JSON_LIST = ['tags'];
const VERSION_JSON_LIST = ['dependencies', 'supported_accelerators', 'supported_os', 'tags', 'tags_admin', 'findings'];
const NODE_JSON = new Set(NODE_JSON_LIST);
const VERSION_JSON = new Set(VERSION_JSON_LIST);
const PUBLISHER_COLUMNS = [...PUBLISHER_WRITABLE_FIELDS, 'status'] as const;
const VERSION_COLUMNS = [...VERSION_PUBLISHED_FIELDS, 'deprecated', 'status', 'status_reason'] as const;

// Sort keys match the indexes of migration 1; ties are broken by id.
const NODE_ORDER: Record<NodeSort, string> = {
  created_at: 'created_at DESC, id',
  downloads: 'downloads DESC, id',
  rating: 'rating DESC, id',
  name: 'coalesce(name, id) COLLATE NOCASE, id',
  search_ranking: 'search_ranking DESC, id',
};

const ACTIVE_NODE = 'NodeStatusActive';
/** The columns of a NodeStamp. */
const STAMP_COLUMNS = 'id, publisher_id, status, created_at, generation';
/** One constant string: the statements' cache finds it without building and hashing the SQL anew. */
const STAMP_SQL = `SELECT ${STAMP_COLUMNS} FROM nodes WHERE id = ?`;
/** How long a stamp read for the listener's shortcut is kept at most (see getNodeStampNow), and how many. */
const STAMP_KEPT_MS = 100;
const STAMPS_KEPT = 10_000;
/** Lists show Active nodes of publishers that are not banned (the search index holds the same set: migration 'hide-banned-publishers'). */
const LISTED = "status = ? AND publisher_id NOT IN (SELECT id FROM publishers WHERE status = 'PublisherStatusBanned')";
/** A row as read → the row the store returns: JSON columns parsed, `seq` dropped (changed in place: rows are fresh objects). */
function decode<T>(row: Raw | undefined, json: readonly string[]): T | undefined {
  if (!row) return undefined;
  for (const key of json) {
    const value = row[key];
    if (typeof value === 'string') row[key] = JSON.parse(value);
  }
  delete row.seq;
  return row as T;
}

function encode(value: unknown, json: boolean): unknown {
  if (value === undefined || value === null) return null;
  if (json) return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/** `SET a = @a, b = @b` for the keys present in `changes` that are allowed columns. */
function assignments(changes: Record<string, unknown>, allowed: readonly string[], json: Set<string>) {
  const keys = allowed.filter((key) => changes[key] !== undefined);
  const values: Raw = {};
  for (const key of keys) values[key] = encode(changes[key], json.has(key));
  return { sql: keys.map((key) => `${key} = @${key}`).join(', '), values, empty: keys.length === 0 };
}

const toNode = (row: Raw | undefined) => {
  const node = decode<Raw>(row, NODE_JSON_LIST);
  if (!node) return undefined;
  const { metadata, ...columns } = node;
  return nodeFromColumns(columns, JSON.parse(metadata as string));
};
/** The `metadata` text after `changes`, or undefined when they change none of its fields. */
const nextDocumentText = (current: string, changes: Record<string, unknown>) => {
  const document = nextDocument(JSON.parse(current), changes);
  return document && JSON.stringify(document);
};
const toVersion = (row: Raw | undefined) => {
  delete row?.version_order; // the store's own, never part of the row
  const version = decode<VersionRow>(row, VERSION_JSON_LIST);
  if (version) version.deprecated = Boolean(version.deprecated);
  return version;
};
const toUser = (row: Raw | undefined) => (row ? ({ ...row, admin: Boolean(row.admin) } as unknown as UserRow) : undefined);

export interface SqliteStoreOptions {
  /** Searches with at most this many matches are ranked by bm25 over them all; see searchNodes. */
  rankLimit?: number;
}

/** Ranking 2,000 matches takes a few milliseconds; ranking 100,000 took over 100 (docs/decisions.md). */
export const DEFAULT_RANK_LIMIT = 2_000;


export function createSqliteRegistryStore(db: Db, { rankLimit = DEFAULT_RANK_LIMIT }: SqliteStoreOptions = {}): RegistryStore {
  // Write transactions take the write lock when they begin, so one that read first never finds the
  // data changed under it by another process sharing the file.
  const writing = <A extends unknown[], R>(fn: (...args: A) => R) => {
    const transaction = db.transaction(fn);
    return (...args: A): R => transaction.immediate(...args);
  };
  // Statements are compiled once and reused: compiling costs more than running most of them.
  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= 500) statements.clear(); // updates build their SQL from the fields given
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const one = (sql: string, ...params: unknown[]) => prepare(sql).get(...params) as Raw | undefined;
  const all = (sql: string, ...params: unknown[]) => prepare(sql).all(...params) as Raw[];

  const getUser = (id: string) => toUser(one('SELECT * FROM users WHERE id = ?', id));
  const getNode = (id: string) => toNode(one('SELECT * FROM nodes WHERE id = ?', id));
  // Read on every GET of a node: its row as an array (raw), which better-sqlite3 builds without
  // naming each column on a new object, made into a NodeStamp of one fixed shape.
  const stampStatement = db.prepare(STAMP_SQL).raw(true);
  const getNodeStamp = (id: string): NodeStamp | undefined => {
    const row = stampStatement.get(id) as [string, string, NodeStamp['status'], string, number] | undefined;
    return row && { id: row[0], publisher_id: row[1], status: row[2], created_at: row[3], generation: row[4] };
  };
  // A stamp read takes SQLite's WAL read lock: two fcntl calls and an fstat, a third of the CPU of a
  // read answered from a kept answer. So the shortcut's stamps are kept while this connection has
  // changed nothing (total_changes(), which reads no table and takes no lock) and for at most
  // STAMP_KEPT_MS, after which a write by another process on the same file is seen too.
  const changesStatement = db.prepare('SELECT total_changes()').pluck();
  const keptStamps = new Map<string, { stamp: NodeStamp | undefined; at: number }>();
  let keptAtChanges = -1;
  const getNodeStampNow = (id: string): NodeStamp | undefined => {
    const changes = changesStatement.get() as number;
    if (changes !== keptAtChanges || keptStamps.size >= STAMPS_KEPT) {
      keptStamps.clear();
      keptAtChanges = changes;
    }
    const now = performance.now();
    const kept = keptStamps.get(id);
    if (kept && now - kept.at < STAMP_KEPT_MS) return kept.stamp;
    const stamp = getNodeStamp(id);
    keptStamps.set(id, { stamp, at: now });
    return stamp;
  };
  const getPublisher = (id: string) => one('SELECT * FROM publishers WHERE id = ?', id) as PublisherRow | undefined;
  const getVersionById = (id: string) => toVersion(one('SELECT * FROM versions WHERE id = ?', id));
  const getVersion = (nodeId: string, version: string) =>
    toVersion(one('SELECT * FROM versions WHERE node_id = ? AND version = ?', nodeId, version));
  const getRole = (publisherId: string, userId: string) =>
    (one('SELECT role FROM members WHERE publisher_id = ? AND user_id = ?', publisherId, userId)?.role as MemberRole | undefined);
  const ownerCount = (publisherId: string) =>
    one("SELECT count(*) AS n FROM members WHERE publisher_id = ? AND role = 'owner'", publisherId)!.n as number;

  const memberSql = MEMBER_SELECT;
  const getMember = (publisherId: string, userId: string) => {
    const row = one(`${memberSql} WHERE m.publisher_id = ? AND m.user_id = ?`, publisherId, userId);
    return row ? toMember(row) : undefined;
  };

  const insertToken = (input: Parameters<RegistryStore['createToken']>[0]) => {
    const id = randomUUID();
    prepare(
      `INSERT INTO tokens (id, kind, user_id, publisher_id, name, hash, prefix, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(id, input.kind, input.userId, input.publisherId ?? null, input.name, input.hash, input.prefix, now());
    return one('SELECT * FROM tokens WHERE id = ?', id) as unknown as TokenRow;
  };

  const updateNode = (id: string, changes: Partial<NodeFields>) => {
    const set = assignments(changes, NODE_COLUMNS, NODE_JSON);
    const current = one('SELECT id, metadata FROM nodes WHERE id = ?', id);
    const metadata = current ? nextDocumentText(current.metadata as string, changes) : undefined;
    if (metadata !== undefined) set.values.metadata = metadata;
    const words = current && changes.name !== undefined ? searchWords(current.id as string, changes.name) : undefined;
    if (words !== undefined) set.values.words = words;
    const sql = [set.sql, metadata !== undefined ? 'metadata = @metadata' : '', words !== undefined ? 'words = @words' : ''].filter(Boolean).join(', ');
    if (sql) prepare(`UPDATE nodes SET ${sql}, updated_at = @updated_at WHERE id = @id`).run({ ...set.values, updated_at: now(), id });
    return getNode(id)!;
  };

  const updateVersion = (id: string, changes: Record<string, unknown>) => {
    const set = assignments(changes, VERSION_COLUMNS, VERSION_JSON);
    if (!set.empty) prepare(`UPDATE versions SET ${set.sql} WHERE id = @id`).run({ ...set.values, id });
    return getVersionById(id)!;
  };

  const page = (rows: Raw[], total: number): Page<NodeRow> => ({ rows: rows.map((row) => toNode(row)!), total });

  const countMatches = (index: 'nodes_fts' | 'nodes_title_fts', match: string) =>
    one(`SELECT count(*) AS n FROM ${index} WHERE ${index} MATCH ?`, match)!.n as number;
  const matchSeqs = (index: 'nodes_fts' | 'nodes_title_fts', match: string, order: string, limit: number, offset: number) =>
    all(`SELECT rowid AS seq FROM ${index} WHERE ${index} MATCH ? ORDER BY ${order} LIMIT ? OFFSET ?`, match, limit, offset).map(
      (row) => row.seq as number,
    );
  /** Matches that do not have every term in their id, name or tags, newest first. */
  const otherMatchSeqs = (match: string, limit: number, offset: number) =>
    all(
      `SELECT rowid AS seq FROM nodes_fts WHERE nodes_fts MATCH ?
         AND rowid NOT IN (SELECT rowid FROM nodes_title_fts WHERE nodes_title_fts MATCH ?)
       ORDER BY rowid DESC LIMIT ? OFFSET ?`,
      match, match, limit, offset,
    ).map((row) => row.seq as number);
  /** The rows of these nodes, in the order given. */
  const nodesBySeq = (seqs: number[]) => {
    const rows = new Map(all(`SELECT * FROM nodes WHERE seq IN (${seqs.map(() => '?').join(', ')})`, ...seqs).map((row) => [row.seq, row]));
    return seqs.map((seq) => rows.get(seq)!);
  };

  const publish = writing((input: PublishInput): PublishOutcome => {
    const existing = getNode(input.nodeId);
    if (existing && existing.publisher_id !== input.publisherId) return { kind: 'other-publisher', publisherId: existing.publisher_id };
    let node: NodeRow;
    if (!existing) {
      const stamp = now();
      const fields = { ...input.nodeDefaults, ...input.node };
      const set = assignments({ status: ACTIVE_NODE, ...fields }, NODE_COLUMNS, NODE_JSON);
      set.values.metadata = nextDocumentText('{}', fields) ?? '{}';
      set.values.words = searchWords(input.nodeId, fields.name);
      const columns = Object.keys(set.values);
      prepare(
        `INSERT INTO nodes (id, publisher_id, created_at, updated_at${columns.map((c) => `, ${c}`).join('')})
         VALUES (@id, @publisher_id, @stamp, @stamp${columns.map((c) => `, @${c}`).join('')})`,
      ).run({ ...set.values, id: input.nodeId, publisher_id: input.publisherId, stamp });
      node = getNode(input.nodeId)!;
    } else {
      // A Deleted node comes back when its own publisher publishes to it again.
      const reactivate = existing.status === 'NodeStatusDeleted' ? { status: 'NodeStatusActive' as const } : {};
      node = updateNode(existing.id, { ...input.node, ...reactivate });
    }

    const current = getVersion(node.id, input.version);
    if (current?.uploaded_at) return { kind: 'archive-exists', version: current };
    if (current && LOCKED_VERSION_STATUS.includes(current.status)) return { kind: 'status-locked', version: current };
    const pending = Object.fromEntries(Object.entries(input.pending).map(([key, value]) => [key, encode(value, VERSION_JSON.has(key))]));
    if (current) {
      prepare(
        `UPDATE versions SET ${VERSION_PUBLISHED_FIELDS.map((f) => `${f} = @${f}`).join(', ')}, status = 'NodeVersionStatusPending' WHERE id = @id`,
      ).run({ ...pending, id: current.id });
      return { kind: 'retried', node, version: getVersionById(current.id)! };
    }
    const id = randomUUID();
    prepare(
      `INSERT INTO versions (id, node_id, version, version_order, created_at, ${VERSION_PUBLISHED_FIELDS.join(', ')})
       VALUES (@id, @node_id, @version, @version_order, @created_at, ${VERSION_PUBLISHED_FIELDS.map((f) => `@${f}`).join(', ')})`,
    ).run({ ...pending, id, node_id: node.id, version: input.version, version_order: versionOrder(input.version), created_at: now() });
    return { kind: 'created', node, version: getVersionById(id)! };
  });

  const setMember = writing((publisherId: string, userId: string, role: MemberRole): MemberRow | 'last-owner' => {
    const current = getRole(publisherId, userId);
    if (current === 'owner' && role !== 'owner' && ownerCount(publisherId) === 1) return 'last-owner';
    if (current) prepare('UPDATE members SET role = ? WHERE publisher_id = ? AND user_id = ?').run(role, publisherId, userId);
    else {
      prepare('INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (?, ?, ?, ?, ?)').run(
        randomUUID(), publisherId, userId, role, now(),
      );
    }
    return getMember(publisherId, userId)!;
  });

  const removeMember = writing((publisherId: string, userId: string) => {
    const current = getRole(publisherId, userId);
    if (!current) return 'not-member' as const;
    if (current === 'owner' && ownerCount(publisherId) === 1) return 'last-owner' as const;
    prepare('DELETE FROM members WHERE publisher_id = ? AND user_id = ?').run(publisherId, userId);
    prepare("UPDATE tokens SET revoked_at = ? WHERE kind = 'pat' AND publisher_id = ? AND user_id = ? AND revoked_at IS NULL").run(now(), publisherId, userId);
    return 'removed' as const;
  });

  const getInvitation = (publisherId: string, userId: string) => {
    const row = one(`${INVITATION_SELECT} WHERE i.publisher_id = ? AND i.user_id = ?`, publisherId, userId);
    return row ? toInvitation(row) : undefined;
  };
  const invite = writing((input: Parameters<RegistryStore['invite']>[0]) => {
    if (getRole(input.publisherId, input.userId)) {
      const member = setMember(input.publisherId, input.userId, input.role);
      return member === 'last-owner' ? member : { kind: 'member' as const, member };
    }
    prepare(
      `INSERT INTO invitations (publisher_id, user_id, role, invited_by, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (publisher_id, user_id) DO UPDATE SET role = excluded.role, invited_by = excluded.invited_by`,
    ).run(input.publisherId, input.userId, input.role, input.invitedBy, now());
    return { kind: 'invited' as const, invitation: getInvitation(input.publisherId, input.userId)! };
  });
  const acceptInvitation = writing((publisherId: string, userId: string) => {
    const invitation = getInvitation(publisherId, userId);
    if (!invitation) return undefined;
    prepare('DELETE FROM invitations WHERE publisher_id = ? AND user_id = ?').run(publisherId, userId);
    prepare('INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (publisher_id, user_id) DO NOTHING').run(
      randomUUID(), publisherId, userId, invitation.role, now(),
    );
    return getMember(publisherId, userId)!;
  });

  const createPublisher = writing((id: string, fields: Partial<PublisherFields>, ownerId: string) => {
    if (getPublisher(id)) return 'exists' as const;
    const set = assignments(fields, PUBLISHER_COLUMNS, new Set());
    const columns = Object.keys(set.values);
    prepare(
      `INSERT INTO publishers (id, created_at${columns.map((c) => `, ${c}`).join('')}) VALUES (@id, @created_at${columns.map((c) => `, @${c}`).join('')})`,
    ).run({ ...set.values, id, created_at: now() });
    prepare("INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (?, ?, ?, 'owner', ?)").run(randomUUID(), id, ownerId, now());
    return getPublisher(id)!;
  });

  // A review in a savepoint of its own (a transaction inside the one reviewsTogether begins).
  const reviewOne = db.transaction((stamp: string, nodeId: string, userId: string, star: number): Reviewed => {
    const previousGeneration = one('SELECT generation FROM nodes WHERE id = ?', nodeId)!.generation as number;
    prepare(
      `INSERT INTO reviews (node_id, user_id, star, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (node_id, user_id) DO UPDATE SET star = excluded.star, updated_at = excluded.updated_at`,
    ).run(nodeId, userId, star, stamp, stamp); // the node's rating follows (trigger reviews_rating_*)
    const node = one(`SELECT ${STAMP_COLUMNS}, rating FROM nodes WHERE id = ?`, nodeId) as Reviewed['node'];
    return { node, previousGeneration };
  });
  // Reviews that arrive in one turn of the event loop are written in one transaction, each in its own
  // savepoint, and answered once it has committed: a commit (its locks and WAL writes) costs more than
  // a review, and many reviewers at once would otherwise pay it each.
  type QueuedReview = { args: [string, string, number]; resolve: (reviewed: Reviewed) => void; reject: (error: unknown) => void };
  let queued: QueuedReview[] = [];
  const reviewsTogether = writing((batch: QueuedReview[], stamp: string) =>
    batch.map(({ args }): { reviewed: Reviewed } | { error: unknown } => {
      try {
        return { reviewed: reviewOne(stamp, ...args) };
      } catch (error) {
        return { error };
      }
    }),
  );
  const writeQueuedReviews = () => {
    const batch = queued;
    queued = [];
    try {
      reviewsTogether(batch, now()).forEach((outcome, i) => ('reviewed' in outcome ? batch[i].resolve(outcome.reviewed) : batch[i].reject(outcome.error)));
    } catch (error) {
      for (const review of batch) review.reject(error); // the transaction did not commit
    }
  };
  const review = (nodeId: string, userId: string, star: number) =>
    new Promise<Reviewed>((resolve, reject) => {
      if (queued.length === 0) setImmediate(writeQueuedReviews);
      queued.push({ args: [nodeId, userId, star], resolve, reject });
    });

  // last_used_at is kept to the minute: a token used again within a minute costs no write.
  const recordTokenUse = writing((id: string, stamp: string) => {
    prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?').run(stamp, id);
  });
  const useToken = (hash: string) => {
    const token = one('SELECT * FROM tokens WHERE hash = ? AND revoked_at IS NULL', hash) as (TokenRow & { hash?: string }) | undefined;
    if (!token) return undefined;
    const { hash: _hash, ...rest } = token;
    if (!rest.last_used_at || Date.now() - Date.parse(rest.last_used_at) >= TOKEN_USE_GRANULARITY_MS) {
      rest.last_used_at = now();
      recordTokenUse(rest.id, rest.last_used_at);
    }
    return { token: rest, user: getUser(token.user_id)! };
  };

  const ensureBootstrapAdmin = writing((userId: string, hash: string, prefix: string, keepLive?: boolean) => {
    if (!getUser(userId)) prepare('INSERT INTO users (id, name, admin, created_at) VALUES (?, ?, 1, ?)').run(userId, 'admin', now());
    else prepare('UPDATE users SET admin = 1 WHERE id = ?').run(userId);
    if (keepLive && one("SELECT 1 FROM tokens WHERE user_id = ? AND name = 'bootstrap' AND hash != ? AND revoked_at IS NULL", userId, hash)) return false;
    const same = one('SELECT id, user_id FROM tokens WHERE hash = ?', hash);
    if (same && same.user_id !== userId) throw new Error('the admin token is already the token of another user');
    prepare("UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND name = 'bootstrap' AND hash != ? AND revoked_at IS NULL").run(now(), userId, hash);
    if (same) prepare('UPDATE tokens SET revoked_at = NULL WHERE id = ?').run(same.id);
    else insertToken({ kind: 'user', userId, name: 'bootstrap', hash, prefix });
    return true;
  });

  const createUser = writing((input: Parameters<RegistryStore['createUser']>[0]) => {
    const id = input.id ?? randomUUID();
    prepare('INSERT INTO users (id, name, email, admin, created_at) VALUES (?, ?, ?, ?, ?)').run(
      id, input.name, input.email ?? null, input.admin ? 1 : 0, now(),
    );
    if (input.token) insertToken({ kind: 'user', userId: id, ...input.token });
    return getUser(id)!;
  });

  const claimArchive = writing((id: string, key: string) => {
    if (one("SELECT 1 FROM versions WHERE id = ? AND archive_sha256 IS NULL AND status = 'NodeVersionStatusPending'", id) === undefined) return false;
    const stale = new Date(Date.now() - STALE_CLAIM_MS).toISOString();
    return (
      db
        .prepare(
          `INSERT INTO archive_claims (version_id, key, created_at) VALUES (?, ?, ?)
           ON CONFLICT (version_id) DO UPDATE SET key = excluded.key, created_at = excluded.created_at WHERE archive_claims.created_at < ?`,
        )
        .run(id, key, now(), stale).changes === 1
    );
  });

  const recordArchive = writing((id: string, archive: ArchiveRecord) => {
    db.prepare(
      `UPDATE versions SET archive_sha256 = ?, archive_size = ?, uploaded_at = ?, findings = ?,
         status_reason = CASE status WHEN 'NodeVersionStatusPending' THEN coalesce(?, status_reason) ELSE status_reason END,
         status = CASE status WHEN 'NodeVersionStatusPending' THEN ? ELSE status END WHERE id = ?`,
    ).run(
      archive.sha256, archive.size, now(), archive.findings ? JSON.stringify(archive.findings) : null, archive.statusReason ?? null, archive.status, id,
    );
    writeClasses(id, archive.classes);
    db.prepare('DELETE FROM archive_claims WHERE version_id = ?').run(id);
    return getVersionById(id)!;
  });

  /** The extraction's status and reason on the version, its classes in node_classes (in recordArchive's transaction). */
  const writeClasses = (id: string, extraction: ArchiveRecord['classes']) => {
    const { status, reason } = extractColumns(extraction);
    db.prepare('UPDATE versions SET app_node_extract_status = ?, app_node_extract_reason = ? WHERE id = ?').run(status, reason, id);
    db.prepare('DELETE FROM node_classes WHERE version_id = ?').run(id);
    const insert = db.prepare(forSqlite(CLASS_ROWS.insert));
    for (const found of extraction?.classes ?? []) insert.run(found.name, JSON.stringify(found), id);
  };

  const tokenColumns = 'id, kind, user_id, publisher_id, name, prefix, created_at, last_used_at, revoked_at';

  return {
    createUser: async (input) => createUser(input),
    getUser: async (id) => getUser(id),
    createToken: async (input) => {
      const { hash: _hash, ...token } = insertToken(input) as TokenRow & { hash?: string };
      return token;
    },
    useToken: async (hash) => useToken(hash),
    getToken: async (id) => one(`SELECT ${tokenColumns} FROM tokens WHERE id = ?`, id) as TokenRow | undefined,
    async listTokens(filter) {
      const rows =
        'userId' in filter
          ? all(`SELECT ${tokenColumns} FROM tokens WHERE user_id = ? AND kind = 'user' AND revoked_at IS NULL ORDER BY created_at, id`, filter.userId)
          : all(`SELECT ${tokenColumns} FROM tokens WHERE publisher_id = ? AND revoked_at IS NULL ORDER BY created_at, id`, filter.publisherId);
      return rows as unknown as TokenRow[];
    },
    tokenGeneration: async () => one("SELECT value FROM generations WHERE name = 'tokens'")!.value as number,
    async revokeToken(id) {
      prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now(), id);
    },
    ensureBootstrapAdmin: async (userId, hash, prefix, keepLive) => ensureBootstrapAdmin(userId, hash, prefix, keepLive),

    getPublisher: async (id) => getPublisher(id),
    createPublisher: async (id, fields, ownerId) => createPublisher(id, fields, ownerId),
    async updatePublisher(id, changes) {
      const set = assignments(changes, PUBLISHER_COLUMNS, new Set());
      if (!set.empty) prepare(`UPDATE publishers SET ${set.sql} WHERE id = @id`).run({ ...set.values, id });
      return getPublisher(id)!;
    },
    listMembers: async (publisherId) => all(`${memberSql} WHERE m.publisher_id = ? ORDER BY m.created_at, m.id`, publisherId).map(toMember),
    getRole: async (publisherId, userId) => getRole(publisherId, userId),
    publishersOfUser: async (userId) =>
      all('SELECT publisher_id AS id, role FROM members WHERE user_id = ? ORDER BY publisher_id', userId) as { id: string; role: MemberRole }[],
    setMember: async (publisherId, userId, role) => setMember(publisherId, userId, role),
    removeMember: async (publisherId, userId) => removeMember(publisherId, userId),
    async findUsers(text) {
      const byId = getUser(text);
      if (byId) return [byId];
      const byEmail = all('SELECT * FROM users WHERE lower(email) = lower(?) ORDER BY created_at, id LIMIT 5', text);
      return (byEmail.length ? byEmail : all('SELECT * FROM users WHERE name = ? ORDER BY created_at, id LIMIT 5', text)).map((row) => toUser(row)!);
    },
    invite: async (input) => invite(input),
    listInvitations: async (filter) =>
      ('userId' in filter
        ? all(`${INVITATION_SELECT} WHERE i.user_id = ? ORDER BY i.created_at, i.publisher_id`, filter.userId)
        : all(`${INVITATION_SELECT} WHERE i.publisher_id = ? ORDER BY i.created_at, i.user_id`, filter.publisherId)
      ).map(toInvitation),
    acceptInvitation: async (publisherId, userId) => acceptInvitation(publisherId, userId),
    async removeInvitation(publisherId, userId) {
      return prepare('DELETE FROM invitations WHERE publisher_id = ? AND user_id = ?').run(publisherId, userId).changes === 1;
    },

    getNode: async (id) => getNode(id),
    async ping() {
      one('SELECT 1');
    },
    getNodeStamp: async (id) => getNodeStamp(id),
    getNodeStampNow,
    async listNodes({ sort, offset, limit }) {
      // kept by triggers (migration 'listed-count'): counting took ~3 ms at 100,000 nodes, ~15 with a ban
      const total = one("SELECT value FROM counts WHERE name = 'listed_nodes'")!.value as number;
      // The page's rows are chosen in the index (migration 'listing-covering-indexes'), then read.
      const order = NODE_ORDER[sort];
      const rows = all(`SELECT * FROM nodes WHERE seq IN (SELECT seq FROM nodes WHERE ${LISTED} ORDER BY ${order} LIMIT ? OFFSET ?) ORDER BY ${order}`, ACTIVE_NODE, limit, offset);
      return page(rows, total);
    },
    async searchNodes({ terms, offset, limit }) {
      // Both indexes hold Active nodes only. Counting matches is one cheap pass over an index;
      // ranking them (bm25) costs much more per match, so only sets of at most `rankLimit` are ranked.
      const match = terms.map((term) => `"${term.replaceAll('"', '""')}"*`).join(' ');
      const total = countMatches('nodes_fts', match);
      if (total <= rankLimit) return page(nodesBySeq(matchSeqs('nodes_fts', match, 'rank, rowid', limit, offset)), total);
      // A term this common says little by itself: nodes with every term in their id, name or tags
      // come first (ranked when few enough, else newest first), then every other match, newest first.
      const titleTotal = countMatches('nodes_title_fts', match);
      const seqs =
        offset < titleTotal ? matchSeqs('nodes_title_fts', match, titleTotal <= rankLimit ? 'rank, rowid' : 'rowid DESC', limit, offset) : [];
      if (seqs.length < limit) seqs.push(...otherMatchSeqs(match, limit - seqs.length, Math.max(0, offset - titleTotal)));
      return page(nodesBySeq(seqs), total);
    },
    listPublisherNodes: async (publisherId, { statuses, offset, limit }) =>
      // The page's rows are chosen in the index (migration 'publisher-nodes-index'), then read.
      all(
        'SELECT * FROM nodes WHERE seq IN (SELECT seq FROM nodes WHERE publisher_id = ? AND status IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT ? OFFSET ?) ORDER BY id',
        publisherId, JSON.stringify(statuses), limit, offset,
      ).map((row) => toNode(row)!),
    updateNode: async (id, changes) => writing(() => updateNode(id, changes))(),
    async countDownload(nodeId) {
      prepare('UPDATE nodes SET downloads = downloads + 1 WHERE id = ?').run(nodeId);
    },
    review,

    listVersions: (nodeId) => {
      const ordered = `FROM versions WHERE node_id = ? ORDER BY ${HIGHEST_FIRST}`;
      return readVersionsInPages({
        generation: async () => one('SELECT versions_generation FROM nodes WHERE id = ?', nodeId)?.versions_generation,
        orderedIds: async () => all(`SELECT id ${ordered}`, nodeId).map((row) => row.id as string),
        rows: async (ids) => all('SELECT * FROM versions WHERE id IN (SELECT value FROM json_each(?))', JSON.stringify(ids)).map((row) => toVersion(row)!),
        all: async () => all(`SELECT * ${ordered}`, nodeId).map((row) => toVersion(row)!),
      });
    },
    async latestVersions(nodeIds) {
      if (nodeIds.length === 0) return [];
      const latest = `SELECT * FROM versions WHERE id IN (SELECT ${LATEST_VERSION_ID} FROM json_each(?) AS n)`;
      return all(latest, JSON.stringify(nodeIds)).map((row) => toVersion(row)!);
    },
    getVersionById: async (id) => getVersionById(id),
    getVersion: async (nodeId, version) => getVersion(nodeId, version),
    publish: async (input) => publish(input),
    updateVersion: async (id, changes: VersionChanges) => updateVersion(id, changes),
    claimArchive: async (id, key) => claimArchive(id, key),
    async releaseArchive(id) {
      db.prepare('DELETE FROM archive_claims WHERE version_id = ?').run(id);
    },
    listArchiveClaims: async () => all('SELECT version_id, key, created_at FROM archive_claims ORDER BY created_at') as { version_id: string; key: string; created_at: string }[],
    recordArchive: async (id, archive) => recordArchive(id, archive),
    listNodeClasses: async (versionId) => all(forSqlite(CLASS_ROWS.byVersion), versionId).map(toClassRow),
    classDefiners: async (name, limit) => all(forSqlite(CLASS_ROWS.definers), name, limit).map(toClassRow),
    async listActiveClasses({ offset, limit }) {
      const total = one(CLASS_ROWS.count)!.n as number;
      return { rows: all(forSqlite(CLASS_ROWS.page), limit, offset).map(toClassRow), total };
    },
  };
}
