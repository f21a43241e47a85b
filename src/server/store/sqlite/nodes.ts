// Nodes on SQLite: read, listed, searched and written. Lists choose a page's rows in an index, then
// read them.
import type {
  DownloadSeen,
  HeldNames,
  NodeFields,
  NodeRow,
  NodeSort,
  NodeState,
  Page,
  RegistryStore,
} from '../registry-store.js';
import { NODE_COLUMNS, nextDocument, nodeDocument, decodeNode } from '../node-document.js';
import { count, decodeNodeState, first, only, text, NODE_STATE_COLUMNS, type Row } from '../rows.js';
import { searchWords } from '../search-words.js';
import { assignments, now, type SqliteAccess } from './access.js';

// Columns holding lists, stored as JSON text.
const NODE_JSON = new Set(['tags']);
const ACTIVE_NODE = 'NodeStatusActive';

// Sort keys match the indexes of migration 1; ties are broken by id.
const NODE_ORDER: Record<NodeSort, string> = {
  created_at: 'created_at DESC, id',
  downloads: 'downloads DESC, id',
  rating: 'rating DESC, id',
  name: 'coalesce(name, id) COLLATE NOCASE, id',
  search_ranking: 'search_ranking DESC, id',
};
/**
 * Lists show Active nodes of publishers that are not banned, with something to install (the search
 * index holds the same set: migrations 'hide-banned-publishers' and 'hide-nothing-to-install').
 */
const LISTED =
  "status = ? AND nothing_to_install = 0 AND publisher_id NOT IN (SELECT id FROM publishers WHERE status = 'PublisherStatusBanned')";

/** Searches with at most this many matches are ranked by bm25 over them all; ranking 100,000 took over 100 ms (docs/decisions.md). */
export const DEFAULT_RANK_LIMIT = 2_000;

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

/** Found by any case (the column's collation). */
export const getNode = (access: SqliteAccess, id: string) =>
  first(access.all('SELECT * FROM nodes WHERE id = ?', id), decodeNode);

/** A node this transaction has just written. */
export const writtenNode = (access: SqliteAccess, id: string) =>
  only(access.all('SELECT * FROM nodes WHERE id = ?', id), decodeNode, `node ${id}`);

/** The `metadata` text after `changes`, or undefined when they change none of its fields. */
const nextDocumentText = (current: Row, changes: Row) => {
  const document = nextDocument(current, changes);
  return document && JSON.stringify(document);
};

/** Creates an Active node with `fields`; its words and document are made from them. */
export function insertNode(
  access: SqliteAccess,
  id: string,
  publisherId: string,
  fields: Partial<NodeFields>,
): NodeRow {
  const set = assignments({ status: ACTIVE_NODE, ...fields }, NODE_COLUMNS, NODE_JSON);
  set.values.metadata = nextDocumentText({}, fields) ?? '{}';
  set.values.words = searchWords(id, fields.name);
  const columns = Object.keys(set.values);
  access
    .prepare(
      `INSERT INTO nodes (id, publisher_id, created_at, updated_at${columns.map((c) => `, ${c}`).join('')})
     VALUES (@id, @publisher_id, @now, @now${columns.map((c) => `, @${c}`).join('')})`,
    )
    .run({ ...set.values, id, publisher_id: publisherId, now: now() });
  return writtenNode(access, id);
}

export function updateNode(access: SqliteAccess, id: string, changes: Partial<NodeFields>): NodeRow {
  const set = assignments(changes, NODE_COLUMNS, NODE_JSON);
  const current = access.one('SELECT id, metadata FROM nodes WHERE id = ?', id);
  const metadata = current ? nextDocumentText(nodeDocument(current), changes) : undefined;
  if (metadata !== undefined) set.values.metadata = metadata;
  const words = current && changes.name !== undefined ? searchWords(text(current, 'id'), changes.name) : undefined;
  if (words !== undefined) set.values.words = words;
  const sql = [
    set.sql,
    metadata !== undefined ? 'metadata = @metadata' : '',
    words !== undefined ? 'words = @words' : '',
  ]
    .filter(Boolean)
    .join(', ');
  if (sql)
    access
      .prepare(`UPDATE nodes SET ${sql}, updated_at = @updated_at WHERE id = @id`)
      .run({ ...set.values, updated_at: now(), id });
  return writtenNode(access, id);
}

/**
 * Read on every GET and review of a node (once per turn): its row as an array (raw), which better-sqlite3
 * builds without naming each column.
 */
function nodeStateReader(access: SqliteAccess) {
  const statement = access.db.prepare(`SELECT ${NODE_STATE_COLUMNS} FROM nodes WHERE id = ?`).raw(true);
  return (id: string): NodeState | undefined => access.readOncePerTurn(`node state ${id}`, () => readNodeState(id));
  function readNodeState(id: string): NodeState | undefined {
    const row: unknown = statement.get(id);
    if (!Array.isArray(row)) return undefined;
    const [nodeId, publisherId, status, createdAt, generation, rating] = row;
    return decodeNodeState({
      id: nodeId,
      publisher_id: publisherId,
      status,
      created_at: createdAt,
      generation,
      rating,
    });
  }
}

function listNodes(
  access: SqliteAccess,
  { sort, offset, limit }: { sort: NodeSort; offset: number; limit: number },
): Page<NodeRow> {
  // kept by triggers (migration 'listed-count'): counting on every first page would grow with the registry
  const total = only(
    access.all("SELECT value FROM counts WHERE name = 'listed_nodes'"),
    (row) => count(row, 'value'),
    'the listed count',
  );
  // The page's rows are chosen in the index (migration 'listing-covering-indexes'), then read.
  const order = NODE_ORDER[sort];
  const chosen = `SELECT seq FROM nodes WHERE ${LISTED} ORDER BY ${order} LIMIT ? OFFSET ?`;
  return {
    rows: access
      .all(`SELECT * FROM nodes WHERE seq IN (${chosen}) ORDER BY ${order}`, ACTIVE_NODE, limit, offset)
      .map(decodeNode),
    total,
  };
}

type FtsIndex = 'nodes_fts' | 'nodes_title_fts';

const countMatches = (access: SqliteAccess, index: FtsIndex, match: string) =>
  only(
    access.all(`SELECT count(*) AS n FROM ${index} WHERE ${index} MATCH ?`, match),
    (row) => count(row, 'n'),
    'matches',
  );

const matchSeqs = (
  access: SqliteAccess,
  index: FtsIndex,
  match: string,
  order: string,
  limit: number,
  offset: number,
) =>
  access
    .all(
      `SELECT rowid AS seq FROM ${index} WHERE ${index} MATCH ? ORDER BY ${order} LIMIT ? OFFSET ?`,
      match,
      limit,
      offset,
    )
    .map((row) => count(row, 'seq'));

/** Matches that do not have every term in their id, name or tags, newest first. */
const otherMatchSeqs = (access: SqliteAccess, match: string, limit: number, offset: number) =>
  access
    .all(
      `SELECT rowid AS seq FROM nodes_fts WHERE nodes_fts MATCH ?
         AND rowid NOT IN (SELECT rowid FROM nodes_title_fts WHERE nodes_title_fts MATCH ?)
       ORDER BY rowid DESC LIMIT ? OFFSET ?`,
      match,
      match,
      limit,
      offset,
    )
    .map((row) => count(row, 'seq'));

/** The nodes of these seqs, in the order given. */
function nodesBySeq(access: SqliteAccess, seqs: number[]): NodeRow[] {
  const rows = access.all(`SELECT * FROM nodes WHERE seq IN (${seqs.map(() => '?').join(', ')})`, ...seqs);
  const bySeq = new Map(rows.map((row) => [count(row, 'seq'), row]));
  return seqs.flatMap((seq) => {
    const row = bySeq.get(seq);
    return row ? [decodeNode(row)] : [];
  });
}

function searchNodes(
  access: SqliteAccess,
  rankLimit: number,
  { terms, offset, limit }: { terms: string[]; offset: number; limit: number },
): Page<NodeRow> {
  // Both indexes hold Active nodes only. Counting matches is one cheap pass over an index;
  // ranking them (bm25) costs much more per match, so only sets of at most `rankLimit` are ranked.
  const match = terms.map((term) => `"${term.replaceAll('"', '""')}"*`).join(' ');
  const total = countMatches(access, 'nodes_fts', match);
  if (total <= rankLimit)
    return { rows: nodesBySeq(access, matchSeqs(access, 'nodes_fts', match, 'rank, rowid', limit, offset)), total };
  // A term this common says little by itself: nodes with every term in their id, name or tags
  // come first (ranked when few enough, else newest first), then every other match, newest first.
  const titleTotal = countMatches(access, 'nodes_title_fts', match);
  const titleOrder = titleTotal <= rankLimit ? 'rank, rowid' : 'rowid DESC';
  const seqs = offset < titleTotal ? matchSeqs(access, 'nodes_title_fts', match, titleOrder, limit, offset) : [];
  if (seqs.length < limit)
    seqs.push(...otherMatchSeqs(access, match, limit - seqs.length, Math.max(0, offset - titleTotal)));
  return { rows: nodesBySeq(access, seqs), total };
}

/** Adds one download unless `seen` was counted today; earlier days' rows are dropped on a new day's first count. */
function downloadCounter(access: SqliteAccess) {
  let prunedBefore = '';
  return access.writing((nodeId: string, seen: DownloadSeen): boolean => {
    if (seen.day > prunedBefore) {
      access.prepare('DELETE FROM download_days WHERE day < ?').run(seen.day);
      prunedBefore = seen.day;
    }
    const inserted = access
      .prepare('INSERT OR IGNORE INTO download_days (day, key) VALUES (?, ?)')
      .run(seen.day, seen.key);
    if (inserted.changes === 0) return false;
    access.prepare('UPDATE nodes SET downloads = downloads + 1 WHERE id = ?').run(nodeId);
    return true;
  });
}

/** See RegistryStore.heldNames: each given name kept when its row exists, compared as getNode and getPublisher compare. */
function heldNames(access: SqliteAccess, { nodeIds, publisherIds }: HeldNames): HeldNames {
  const held = (table: string, names: string[]) =>
    access
      .all(
        `SELECT value FROM json_each(?) AS given WHERE EXISTS (SELECT 1 FROM ${table} WHERE id = given.value)`,
        JSON.stringify(names),
      )
      .map((row) => text(row, 'value'));
  return { nodeIds: held('nodes', nodeIds), publisherIds: held('publishers', publisherIds) };
}

export function sqliteNodeStore(access: SqliteAccess, rankLimit: number): NodeStore {
  const getNodeState = nodeStateReader(access);
  const updating = access.writing((id: string, changes: Partial<NodeFields>) => updateNode(access, id, changes));
  const countOnce = downloadCounter(access);
  return {
    getNode: async (id) => getNode(access, id),
    getNodeState: async (id) => getNodeState(id),
    heldNames: async (names) => heldNames(access, names),
    listNodes: async (query) => listNodes(access, query),
    searchNodes: async (query) => searchNodes(access, rankLimit, query),
    listPublisherNodes: async (publisherId, { statuses, offset, limit }) =>
      // The page's rows are chosen in the index (migration 'publisher-nodes-index'), then read.
      access
        .all(
          'SELECT * FROM nodes WHERE seq IN (SELECT seq FROM nodes WHERE publisher_id = ? AND status IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT ? OFFSET ?) ORDER BY id',
          publisherId,
          JSON.stringify(statuses),
          limit,
          offset,
        )
        .map(decodeNode),
    updateNode: async (id, changes) => updating(id, changes),
    countDownload: async (nodeId, seen) => countOnce(nodeId, seen),
  };
}
