// Nodes on PostgreSQL: read, listed, searched and written. Found by any case (lower(id)); lists choose
// a page's rows in an index, then read them.
import type postgres from 'postgres';
import type { HeldNames, NodeFields, NodeRow, NodeSort, Page, RegistryStore } from '../registry-store.js';
import { NODE_COLUMNS, nextDocument, nodeDocument, decodeNode } from '../node-document.js';
import { SEARCH_VECTOR } from '../postgres-migrations.js';
import { count, decodeNodeState, first, only, NODE_STATE_COLUMNS, text } from '../rows.js';
import { searchWords } from '../search-words.js';
import { now, setList, type Sql } from './columns.js';

const NODE_JSON = new Set(['tags']);
/** Searches with at most this many matches are ranked (as the SQLite store's DEFAULT_RANK_LIMIT). */
const RANK_LIMIT = 2_000;

const NODE_ORDER: Record<NodeSort, string> = {
  created_at: 'created_at DESC, id',
  downloads: 'downloads DESC, id',
  rating: 'rating DESC, id',
  name: 'lower(coalesce(name, id)), id',
  search_ranking: 'search_ranking DESC NULLS LAST, id',
};
// A node with nothing to install (migration 'hide-nothing-to-install') is left out too.
const LISTED = `status = 'NodeStatusActive' AND NOT nothing_to_install AND NOT EXISTS
  (SELECT 1 FROM publishers p WHERE p.id = nodes.publisher_id AND p.status = 'PublisherStatusBanned')`;

type NodeStore = Pick<
  RegistryStore,
  | 'getNode'
  | 'getNodeState'
  | 'heldNames'
  | 'listNodes'
  | 'searchNodes'
  | 'listPublisherNodes'
  | 'updateNode'
  | 'countDownload'
>;

export const getNode = async (db: Sql, id: string, lock = false) =>
  first(
    await db.unsafe(`SELECT * FROM nodes WHERE lower(id) = lower($1)${lock ? ' FOR UPDATE' : ''}`, [id]),
    decodeNode,
  );

/** A node this transaction has just written. */
export const writtenNode = async (db: Sql, id: string) =>
  only(await db`SELECT * FROM nodes WHERE id = ${id}`, decodeNode, `node ${id}`);

/** Creates an Active node with `fields`, unless one with its id exists: then undefined. */
export async function insertNode(
  tx: Sql,
  id: string,
  publisherId: string,
  fields: Partial<NodeFields>,
): Promise<NodeRow | undefined> {
  const at = now();
  const set = setList(tx, { status: 'NodeStatusActive', ...fields }, NODE_COLUMNS, NODE_JSON) ?? {};
  const document = nextDocument({}, fields) ?? {};
  const row = {
    ...set,
    metadata: tx.json(document as postgres.JSONValue),
    words: searchWords(id, fields.name),
    id,
    publisher_id: publisherId,
    created_at: at,
    updated_at: at,
  };
  const [inserted] = await tx`INSERT INTO nodes ${tx(row)} ON CONFLICT DO NOTHING RETURNING id`;
  return inserted ? writtenNode(tx, id) : undefined;
}

/** Writes `changes` to the node, locked first; in a transaction. */
export async function updateNode(tx: Sql, id: string, changes: Partial<NodeFields>): Promise<NodeRow> {
  const [current] = await tx.unsafe(`SELECT id, metadata FROM nodes WHERE lower(id) = lower($1) FOR UPDATE`, [id]);
  if (!current) throw new Error(`node ${id} not found`);
  const storedId = text(current, 'id');
  const set = setList(tx, changes, NODE_COLUMNS, NODE_JSON) ?? {};
  const document = nextDocument(nodeDocument(current), changes);
  if (document) set.metadata = tx.json(document as postgres.JSONValue);
  if (changes.name !== undefined) set.words = searchWords(storedId, changes.name);
  if (Object.keys(set).length) await tx`UPDATE nodes SET ${tx({ ...set, updated_at: now() })} WHERE id = ${storedId}`;
  return writtenNode(tx, storedId);
}

async function listNodes(
  sql: postgres.Sql,
  { sort, offset, limit }: { sort: NodeSort; offset: number; limit: number },
): Promise<Page<NodeRow>> {
  // kept by triggers (migration 'listed-count'), as on SQLite
  const total = only(
    await sql`SELECT value FROM counts WHERE name = 'listed_nodes'`,
    (row) => count(row, 'value'),
    'the listed count',
  );
  // The page's rows are chosen in the index (migration 'listing-covering-indexes'), then read.
  const order = NODE_ORDER[sort];
  const chosen = `SELECT seq FROM nodes WHERE ${LISTED} ORDER BY ${order} LIMIT $1 OFFSET $2`;
  return {
    rows: (await sql.unsafe(`SELECT * FROM nodes WHERE seq IN (${chosen}) ORDER BY ${order}`, [limit, offset])).map(
      decodeNode,
    ),
    total,
  };
}

async function searchNodes(
  sql: postgres.Sql,
  { terms, offset, limit }: { terms: string[]; offset: number; limit: number },
): Promise<Page<NodeRow>> {
  // Each term matches as a prefix of a word; the words are those the 'simple' configuration makes.
  const words = terms.flatMap((term) => term.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
  if (words.length === 0) return { rows: [], total: 0 };
  const query = words.map((word) => `${word}:*`).join(' & ');
  const matches = `(${SEARCH_VECTOR}) @@ to_tsquery('simple', $1)`;
  const total = only(
    await sql.unsafe(`SELECT count(*)::int AS n FROM nodes WHERE ${LISTED} AND ${matches}`, [query]),
    (row) => count(row, 'n'),
    'matches',
  );
  // Ranking costs per match: a term that matches more than RANK_LIMIT nodes says little by itself,
  // and its matches come newest first.
  const order = total <= RANK_LIMIT ? `ts_rank((${SEARCH_VECTOR}), to_tsquery('simple', $1)) DESC, seq` : 'seq DESC';
  const rows = await sql.unsafe(
    `SELECT * FROM nodes WHERE ${LISTED} AND ${matches} ORDER BY ${order} LIMIT $2 OFFSET $3`,
    [query, limit, offset],
  );
  return { rows: rows.map(decodeNode), total };
}

/** See RegistryStore.heldNames: each given name kept when its row exists, compared as getNode and getPublisher compare. */
async function heldNames(sql: Sql, { nodeIds, publisherIds }: HeldNames): Promise<HeldNames> {
  const nodes = await sql.unsafe(
    'SELECT given FROM unnest($1::text[]) AS given WHERE EXISTS (SELECT 1 FROM nodes WHERE lower(id) = lower(given))',
    [nodeIds],
  );
  const publishers = await sql.unsafe(
    'SELECT given FROM unnest($1::text[]) AS given WHERE EXISTS (SELECT 1 FROM publishers WHERE id = given)',
    [publisherIds],
  );
  return { nodeIds: nodes.map((row) => text(row, 'given')), publisherIds: publishers.map((row) => text(row, 'given')) };
}

export function postgresNodeStore(sql: postgres.Sql): NodeStore {
  // Earlier days' download rows are dropped on a new day's first count.
  let prunedBefore = '';
  return {
    getNode: (id) => getNode(sql, id),
    getNodeState: async (id) =>
      first(
        await sql.unsafe(`SELECT ${NODE_STATE_COLUMNS} FROM nodes WHERE lower(id) = lower($1)`, [id]),
        decodeNodeState,
      ),
    heldNames: (names) => heldNames(sql, names),
    listNodes: (query) => listNodes(sql, query),
    searchNodes: (query) => searchNodes(sql, query),
    listPublisherNodes: async (publisherId, { statuses, offset, limit }) =>
      // The page's rows are chosen in the index (migration 'publisher-nodes-index'), then read.
      (
        await sql`SELECT * FROM nodes WHERE seq IN (
        SELECT seq FROM nodes WHERE publisher_id = ${publisherId} AND status = ANY(${sql.array([...statuses])}::text[]) ORDER BY id LIMIT ${limit} OFFSET ${offset}
      ) ORDER BY id`
      ).map(decodeNode),
    updateNode: (id, changes) =>
      sql.begin(async (tx) => {
        // the publisher before the node, as publish and a ban take them
        await tx`SELECT 1 FROM publishers WHERE id = (SELECT publisher_id FROM nodes WHERE lower(id) = lower(${id})) FOR SHARE`;
        return updateNode(tx, id, changes);
      }),
    async countDownload(nodeId, seen) {
      if (seen.day > prunedBefore) {
        await sql`DELETE FROM download_days WHERE day < ${seen.day}`;
        prunedBefore = seen.day;
      }
      // One statement: the row for today's download, and the count only when the row is new.
      const counted = await sql`WITH seen AS (
        INSERT INTO download_days (day, key) VALUES (${seen.day}, ${seen.key}) ON CONFLICT DO NOTHING RETURNING 1
      ) UPDATE nodes SET downloads = downloads + 1 WHERE id = ${nodeId} AND EXISTS (SELECT 1 FROM seen) RETURNING 1`;
      return counted.length > 0;
    },
  };
}
