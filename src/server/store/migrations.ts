// Versioned schema changes, applied in order once each (PRAGMA user_version counts them).
// Append only: never edit a migration that has shipped.
import { INVITATIONS_SCHEMA } from './member-row.js';
import { ADDRESS_INVITATIONS_SCHEMA } from './address-invitations.js';
import { WEBHOOKS_SCHEMA } from './webhooks.js';
import { WEB_SESSIONS_TABLE } from './web.js';
import { NODE_LOOKALIKE } from './lookalike.js';
import { USER_LIFECYCLE_COLUMNS } from './user-lifecycle.js';
import { AUDIT_SCHEMA } from './audit.js';

export interface Migration {
  name: string;
  sql: string;
}

// Lists are stored as JSON text; timestamps as ISO 8601 text (they sort as text).
const registry = `
CREATE TABLE users (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  email       TEXT,
  admin       INTEGER NOT NULL DEFAULT 0,
  created_at  TEXT NOT NULL
);

-- Only the SHA-256 of a token is kept; prefix is its first characters, shown in lists.
CREATE TABLE tokens (
  id            TEXT PRIMARY KEY,
  kind          TEXT NOT NULL CHECK (kind IN ('user', 'pat')),
  user_id       TEXT NOT NULL REFERENCES users(id),
  publisher_id  TEXT REFERENCES publishers(id),
  name          TEXT NOT NULL,
  hash          TEXT NOT NULL UNIQUE,
  prefix        TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  last_used_at  TEXT,
  revoked_at    TEXT,
  CHECK ((kind = 'pat') = (publisher_id IS NOT NULL))
);
CREATE INDEX tokens_by_user ON tokens(user_id, kind);
CREATE INDEX tokens_by_publisher ON tokens(publisher_id);

CREATE TABLE publishers (
  id                TEXT PRIMARY KEY,
  name              TEXT,
  description       TEXT,
  logo              TEXT,
  source_code_repo  TEXT,
  support           TEXT,
  website           TEXT,
  status            TEXT NOT NULL DEFAULT 'PublisherStatusActive',
  created_at        TEXT NOT NULL
);

CREATE TABLE members (
  id            TEXT PRIMARY KEY,
  publisher_id  TEXT NOT NULL REFERENCES publishers(id),
  user_id       TEXT NOT NULL REFERENCES users(id),
  role          TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  created_at    TEXT NOT NULL,
  UNIQUE (publisher_id, user_id)
);
CREATE INDEX members_by_user ON members(user_id);

-- seq is a stable integer key for the full-text index; id is unique regardless of case and kept
-- in the case it was first published in.
CREATE TABLE nodes (
  seq                               INTEGER PRIMARY KEY,
  id                                TEXT NOT NULL UNIQUE COLLATE NOCASE,
  publisher_id                      TEXT NOT NULL REFERENCES publishers(id),
  name                              TEXT,
  description                       TEXT,
  author                            TEXT,
  category                          TEXT,
  banner_url                        TEXT,
  icon                              TEXT,
  license                           TEXT,
  repository                        TEXT,
  preempted_app_node_names          TEXT,
  supported_accelerators            TEXT,
  supported_appui_frontend_version  TEXT,
  supported_appui_version           TEXT,
  supported_os                      TEXT,
  tags                              TEXT,
  tags_admin                        TEXT,
  translations                      TEXT,
  search_ranking                    INTEGER,
  repohost_stars                    INTEGER,
  status                            TEXT NOT NULL DEFAULT 'NodeStatusActive',
  status_detail                     TEXT,
  downloads                         INTEGER NOT NULL DEFAULT 0,
  rating                            REAL NOT NULL DEFAULT 0,
  created_at                        TEXT NOT NULL,
  updated_at                        TEXT NOT NULL
);
CREATE INDEX nodes_by_publisher ON nodes(publisher_id);
CREATE INDEX nodes_by_created ON nodes(status, created_at DESC, id);
CREATE INDEX nodes_by_downloads ON nodes(status, downloads DESC, id);
CREATE INDEX nodes_by_rating ON nodes(status, rating DESC, id);
CREATE INDEX nodes_by_name ON nodes(status, coalesce(name, id) COLLATE NOCASE, id);
CREATE INDEX nodes_by_ranking ON nodes(status, search_ranking DESC, id);

-- Only Active nodes are indexed (lists and search show nothing else), so a search needs no join to
-- filter, count or rank. Changes to downloads or rating do not touch the index.
CREATE VIRTUAL TABLE nodes_fts USING fts5(
  id, name, description, author, tags,
  content = 'nodes', content_rowid = 'seq', prefix = '2 3 4'
);
-- Matches in the id and name weigh most.
INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('rank', 'bm25(10.0, 8.0, 1.0, 3.0, 4.0)');
CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes WHEN new.status = 'NodeStatusActive' BEGIN
  INSERT INTO nodes_fts(rowid, id, name, description, author, tags)
  VALUES (new.seq, new.id, new.name, new.description, new.author, new.tags);
END;
CREATE TRIGGER nodes_fts_delete AFTER DELETE ON nodes WHEN old.status = 'NodeStatusActive' BEGIN
  INSERT INTO nodes_fts(nodes_fts, rowid, id, name, description, author, tags)
  VALUES ('delete', old.seq, old.id, old.name, old.description, old.author, old.tags);
END;
CREATE TRIGGER nodes_fts_update AFTER UPDATE OF id, name, description, author, tags, status ON nodes BEGIN
  INSERT INTO nodes_fts(nodes_fts, rowid, id, name, description, author, tags)
  SELECT 'delete', old.seq, old.id, old.name, old.description, old.author, old.tags WHERE old.status = 'NodeStatusActive';
  INSERT INTO nodes_fts(rowid, id, name, description, author, tags)
  SELECT new.seq, new.id, new.name, new.description, new.author, new.tags WHERE new.status = 'NodeStatusActive';
END;

-- An archive exists once archive_sha256 and uploaded_at are set.
CREATE TABLE versions (
  id                                TEXT PRIMARY KEY,
  node_id                           TEXT NOT NULL REFERENCES nodes(id),
  version                           TEXT NOT NULL,
  changelog                         TEXT,
  dependencies                      TEXT,
  supported_accelerators            TEXT,
  supported_appui_frontend_version  TEXT,
  supported_appui_version           TEXT,
  supported_os                      TEXT,
  tags                              TEXT,
  tags_admin                        TEXT,
  deprecated                        INTEGER NOT NULL DEFAULT 0,
  status                            TEXT NOT NULL DEFAULT 'NodeVersionStatusPending',
  status_reason                     TEXT,
  archive_sha256                    TEXT,
  archive_size                      INTEGER,
  uploaded_at                       TEXT,
  created_at                        TEXT NOT NULL,
  UNIQUE (node_id, version)
);

CREATE TABLE reviews (
  node_id     TEXT NOT NULL REFERENCES nodes(id),
  user_id     TEXT NOT NULL REFERENCES users(id),
  star        INTEGER NOT NULL CHECK (star BETWEEN 1 AND 5),
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (node_id, user_id)
);
`;

// Lists and search show Active nodes of publishers that are not banned. The full-text index follows
// suit: a node is indexed while it is Active and its publisher is not banned, and banning or
// unbanning a publisher takes its Active nodes out of the index or puts them back. (An FTS5 'delete'
// must name a row exactly as indexed, so every trigger uses that one rule.)
/**
 * How many nodes the lists show (Active, publisher not banned), kept by triggers in the same transaction
 * as every write that changes it, so the first page of GET /nodes reads one row instead of counting
 * every listed node, a cost that grows with the registry (docs/decisions.md).
 */
const LISTED_NODE = (row: string) =>
  `${row}.status = 'NodeStatusActive' AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = ${row}.publisher_id AND status = 'PublisherStatusBanned')`;
const listedCount = `
CREATE TABLE counts (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO counts (name, value) SELECT 'listed_nodes', count(*) FROM nodes WHERE ${LISTED_NODE('nodes')};
CREATE TRIGGER nodes_listed_insert AFTER INSERT ON nodes WHEN ${LISTED_NODE('new')} BEGIN
  UPDATE counts SET value = value + 1 WHERE name = 'listed_nodes';
END;
CREATE TRIGGER nodes_listed_delete AFTER DELETE ON nodes WHEN ${LISTED_NODE('old')} BEGIN
  UPDATE counts SET value = value - 1 WHERE name = 'listed_nodes';
END;
CREATE TRIGGER nodes_listed_update AFTER UPDATE OF status, publisher_id ON nodes
WHEN old.status IS NOT new.status OR old.publisher_id IS NOT new.publisher_id BEGIN
  UPDATE counts SET value = value - (${LISTED_NODE('old')}) + (${LISTED_NODE('new')}) WHERE name = 'listed_nodes';
END;
CREATE TRIGGER publishers_listed_ban AFTER UPDATE OF status ON publishers
WHEN (old.status = 'PublisherStatusBanned') IS NOT (new.status = 'PublisherStatusBanned') BEGIN
  UPDATE counts SET value = value + (CASE new.status WHEN 'PublisherStatusBanned' THEN -1 ELSE 1 END)
    * (SELECT count(*) FROM nodes WHERE publisher_id = new.id AND status = 'NodeStatusActive')
  WHERE name = 'listed_nodes';
END;
`;

const hideBannedPublishers = `
DROP TRIGGER nodes_fts_insert;
DROP TRIGGER nodes_fts_delete;
DROP TRIGGER nodes_fts_update;
CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes
WHEN new.status = 'NodeStatusActive'
  AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = new.publisher_id AND status = 'PublisherStatusBanned') BEGIN
  INSERT INTO nodes_fts(rowid, id, name, description, author, tags)
  VALUES (new.seq, new.id, new.name, new.description, new.author, new.tags);
END;
CREATE TRIGGER nodes_fts_delete AFTER DELETE ON nodes
WHEN old.status = 'NodeStatusActive'
  AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = old.publisher_id AND status = 'PublisherStatusBanned') BEGIN
  INSERT INTO nodes_fts(nodes_fts, rowid, id, name, description, author, tags)
  VALUES ('delete', old.seq, old.id, old.name, old.description, old.author, old.tags);
END;
CREATE TRIGGER nodes_fts_update AFTER UPDATE OF id, name, description, author, tags, status ON nodes BEGIN
  INSERT INTO nodes_fts(nodes_fts, rowid, id, name, description, author, tags)
  SELECT 'delete', old.seq, old.id, old.name, old.description, old.author, old.tags
  WHERE old.status = 'NodeStatusActive'
    AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = old.publisher_id AND status = 'PublisherStatusBanned');
  INSERT INTO nodes_fts(rowid, id, name, description, author, tags)
  SELECT new.seq, new.id, new.name, new.description, new.author, new.tags
  WHERE new.status = 'NodeStatusActive'
    AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = new.publisher_id AND status = 'PublisherStatusBanned');
END;
CREATE TRIGGER publishers_fts_ban AFTER UPDATE OF status ON publishers
WHEN old.status != 'PublisherStatusBanned' AND new.status = 'PublisherStatusBanned' BEGIN
  INSERT INTO nodes_fts(nodes_fts, rowid, id, name, description, author, tags)
  SELECT 'delete', seq, id, name, description, author, tags FROM nodes WHERE publisher_id = new.id AND status = 'NodeStatusActive';
END;
CREATE TRIGGER publishers_fts_unban AFTER UPDATE OF status ON publishers
WHEN old.status = 'PublisherStatusBanned' AND new.status != 'PublisherStatusBanned' BEGIN
  INSERT INTO nodes_fts(rowid, id, name, description, author, tags)
  SELECT seq, id, name, description, author, tags FROM nodes WHERE publisher_id = new.id AND status = 'NodeStatusActive';
END;
INSERT INTO nodes_fts(nodes_fts, rowid, id, name, description, author, tags)
SELECT 'delete', n.seq, n.id, n.name, n.description, n.author, n.tags
FROM nodes n JOIN publishers p ON p.id = n.publisher_id
WHERE n.status = 'NodeStatusActive' AND p.status = 'PublisherStatusBanned';
`;

// Uploads in the middle of storing their archive. A version gets its archive in three steps: a claim
// here (only one per version, and none once it has an archive: the "already uploaded" decision), the
// file renamed into place, then the archive recorded on the version and the claim removed in one
// transaction. A claim found at start is an upload that died between the steps, never acknowledged:
// its file is removed and the claim dropped, so the store and the files agree and the upload can be
// retried.
const archiveClaims = `
CREATE TABLE archive_claims (
  version_id  TEXT PRIMARY KEY REFERENCES versions(id),
  key         TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
`;

// The id, name and tags again, in an index of their own: when a search term matches very many nodes,
// those that have it in these columns are found without reading every match (searchNodes). Search
// relies on this index holding no node the main one lacks, so it holds only nodes that every list
// shows: Active, of a publisher that is not banned. (An FTS5 'delete' must name a row exactly as
// indexed, so every trigger applies that one rule.)
const searchTitles = `
CREATE VIRTUAL TABLE nodes_title_fts USING fts5(
  id, name, tags,
  content = 'nodes', content_rowid = 'seq', prefix = '2 3 4'
);
INSERT INTO nodes_title_fts(nodes_title_fts, rank) VALUES ('rank', 'bm25(10.0, 8.0, 4.0)');
INSERT INTO nodes_title_fts(rowid, id, name, tags)
SELECT n.seq, n.id, n.name, n.tags FROM nodes n JOIN publishers p ON p.id = n.publisher_id
WHERE n.status = 'NodeStatusActive' AND p.status != 'PublisherStatusBanned';
CREATE TRIGGER nodes_title_fts_insert AFTER INSERT ON nodes
WHEN new.status = 'NodeStatusActive'
  AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = new.publisher_id AND status = 'PublisherStatusBanned') BEGIN
  INSERT INTO nodes_title_fts(rowid, id, name, tags) VALUES (new.seq, new.id, new.name, new.tags);
END;
CREATE TRIGGER nodes_title_fts_delete AFTER DELETE ON nodes
WHEN old.status = 'NodeStatusActive'
  AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = old.publisher_id AND status = 'PublisherStatusBanned') BEGIN
  INSERT INTO nodes_title_fts(nodes_title_fts, rowid, id, name, tags) VALUES ('delete', old.seq, old.id, old.name, old.tags);
END;
CREATE TRIGGER nodes_title_fts_update AFTER UPDATE OF id, name, tags, status ON nodes BEGIN
  INSERT INTO nodes_title_fts(nodes_title_fts, rowid, id, name, tags)
  SELECT 'delete', old.seq, old.id, old.name, old.tags
  WHERE old.status = 'NodeStatusActive'
    AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = old.publisher_id AND status = 'PublisherStatusBanned');
  INSERT INTO nodes_title_fts(rowid, id, name, tags)
  SELECT new.seq, new.id, new.name, new.tags
  WHERE new.status = 'NodeStatusActive'
    AND NOT EXISTS (SELECT 1 FROM publishers WHERE id = new.publisher_id AND status = 'PublisherStatusBanned');
END;
CREATE TRIGGER publishers_title_fts_ban AFTER UPDATE OF status ON publishers
WHEN old.status != 'PublisherStatusBanned' AND new.status = 'PublisherStatusBanned' BEGIN
  INSERT INTO nodes_title_fts(nodes_title_fts, rowid, id, name, tags)
  SELECT 'delete', seq, id, name, tags FROM nodes WHERE publisher_id = new.id AND status = 'NodeStatusActive';
END;
CREATE TRIGGER publishers_title_fts_unban AFTER UPDATE OF status ON publishers
WHEN old.status = 'PublisherStatusBanned' AND new.status != 'PublisherStatusBanned' BEGIN
  INSERT INTO nodes_title_fts(rowid, id, name, tags)
  SELECT seq, id, name, tags FROM nodes WHERE publisher_id = new.id AND status = 'NodeStatusActive';
END;
`;

// Node metadata that nothing searches, sorts or constrains moves into one JSON document (the fields
// are named by the contract, src/contract/resources.ts: NODE_COLUMN_FIELDS stay columns). Unset
// fields are left out of the document.
const nodeMetadata = `
ALTER TABLE nodes ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
UPDATE nodes SET metadata = json_patch('{}', json_object(
  'banner_url', banner_url, 'category', category, 'icon', icon, 'license', license, 'repository', repository,
  'preempted_app_node_names', json(preempted_app_node_names), 'supported_accelerators', json(supported_accelerators),
  'supported_appui_frontend_version', supported_appui_frontend_version, 'supported_appui_version', supported_appui_version,
  'supported_os', json(supported_os), 'tags_admin', json(tags_admin), 'translations', json(translations),
  'repohost_stars', repohost_stars, 'status_detail', status_detail
));
ALTER TABLE nodes DROP COLUMN banner_url;
ALTER TABLE nodes DROP COLUMN category;
ALTER TABLE nodes DROP COLUMN icon;
ALTER TABLE nodes DROP COLUMN license;
ALTER TABLE nodes DROP COLUMN repository;
ALTER TABLE nodes DROP COLUMN preempted_app_node_names;
ALTER TABLE nodes DROP COLUMN supported_accelerators;
ALTER TABLE nodes DROP COLUMN supported_appui_frontend_version;
ALTER TABLE nodes DROP COLUMN supported_appui_version;
ALTER TABLE nodes DROP COLUMN supported_os;
ALTER TABLE nodes DROP COLUMN tags_admin;
ALTER TABLE nodes DROP COLUMN translations;
ALTER TABLE nodes DROP COLUMN repohost_stars;
ALTER TABLE nodes DROP COLUMN status_detail;
`;

// Every write that changes a node's answer (the node, its versions, its publisher, a review) bumps
// the node's generation in the same transaction, so a server that kept the answer knows it is stale
// by reading the node alone; the rating is a running sum and count, kept by the reviews themselves.
// Revoking a token, or changing a user's admin flag, bumps the 'tokens' generation, which
// every cached authentication is checked against. Triggers, so no write path can forget.
const generations = `
ALTER TABLE nodes ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN rating_sum INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN rating_count INTEGER NOT NULL DEFAULT 0;
UPDATE nodes SET
  rating_sum = coalesce((SELECT sum(star) FROM reviews WHERE node_id = nodes.id), 0),
  rating_count = (SELECT count(*) FROM reviews WHERE node_id = nodes.id);
CREATE TRIGGER nodes_generation AFTER UPDATE ON nodes WHEN new.generation = old.generation BEGIN
  UPDATE nodes SET generation = old.generation + 1 WHERE id = new.id;
END;
CREATE TRIGGER versions_generation_insert AFTER INSERT ON versions BEGIN
  UPDATE nodes SET generation = generation + 1 WHERE id = new.node_id;
END;
CREATE TRIGGER versions_generation_update AFTER UPDATE ON versions BEGIN
  UPDATE nodes SET generation = generation + 1 WHERE id IN (old.node_id, new.node_id);
END;
CREATE TRIGGER versions_generation_delete AFTER DELETE ON versions BEGIN
  UPDATE nodes SET generation = generation + 1 WHERE id = old.node_id;
END;
CREATE TRIGGER publishers_generation AFTER UPDATE ON publishers BEGIN
  UPDATE nodes SET generation = generation + 1 WHERE publisher_id = new.id;
END;
CREATE TRIGGER reviews_rating_insert AFTER INSERT ON reviews BEGIN
  UPDATE nodes SET rating_sum = rating_sum + new.star, rating_count = rating_count + 1,
    rating = (rating_sum + new.star) * 1.0 / (rating_count + 1), generation = generation + 1
  WHERE id = new.node_id;
END;
CREATE TRIGGER reviews_rating_update AFTER UPDATE OF star ON reviews WHEN new.star != old.star BEGIN
  UPDATE nodes SET rating_sum = rating_sum + new.star - old.star,
    rating = (rating_sum + new.star - old.star) * 1.0 / rating_count, generation = generation + 1
  WHERE id = new.node_id;
END;
CREATE TRIGGER reviews_rating_delete AFTER DELETE ON reviews BEGIN
  UPDATE nodes SET rating_sum = rating_sum - old.star, rating_count = rating_count - 1,
    rating = CASE WHEN rating_count = 1 THEN 0 ELSE (rating_sum - old.star) * 1.0 / (rating_count - 1) END,
    generation = generation + 1
  WHERE id = old.node_id;
END;

CREATE TABLE generations (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO generations (name, value) VALUES ('tokens', 0);
CREATE TRIGGER tokens_generation_revoke AFTER UPDATE OF revoked_at ON tokens BEGIN
  UPDATE generations SET value = value + 1 WHERE name = 'tokens';
END;
CREATE TRIGGER users_generation_admin AFTER UPDATE OF admin ON users BEGIN
  UPDATE generations SET value = value + 1 WHERE name = 'tokens';
END;
`;

// A review changes the rating (its sum and count) and no longer the node's generation: the kept answer
// of a node stays current and only its rating is patched in from the node's state (getNodeState), which
// carries it (node-answers.ts). Every other write to a node still moves the generation.
const ratingApart = `
DROP TRIGGER reviews_rating_insert;
CREATE TRIGGER reviews_rating_insert AFTER INSERT ON reviews BEGIN
  UPDATE nodes SET rating_sum = rating_sum + new.star, rating_count = rating_count + 1,
    rating = (rating_sum + new.star) * 1.0 / (rating_count + 1)
  WHERE id = new.node_id;
END;
DROP TRIGGER reviews_rating_update;
CREATE TRIGGER reviews_rating_update AFTER UPDATE OF star ON reviews WHEN new.star != old.star BEGIN
  UPDATE nodes SET rating_sum = rating_sum + new.star - old.star,
    rating = (rating_sum + new.star - old.star) * 1.0 / rating_count
  WHERE id = new.node_id;
END;
DROP TRIGGER reviews_rating_delete;
CREATE TRIGGER reviews_rating_delete AFTER DELETE ON reviews BEGIN
  UPDATE nodes SET rating_sum = rating_sum - old.star, rating_count = rating_count - 1,
    rating = CASE WHEN rating_count = 1 THEN 0 ELSE (rating_sum - old.star) * 1.0 / (rating_count - 1) END
  WHERE id = old.node_id;
END;
DROP TRIGGER nodes_generation;
CREATE TRIGGER nodes_generation AFTER UPDATE ON nodes
WHEN new.generation = old.generation AND new.rating_sum = old.rating_sum AND new.rating_count = old.rating_count BEGIN
  UPDATE nodes SET generation = old.generation + 1 WHERE id = new.id;
END;
`;

// The split words of ids and names (search-words.ts) in a column of their own, `words`, written by the
// store and filled here by its function (db.ts registers it; a row written later by an older nodereg is
// filled when the store opens), and in both full-text indexes: FTS5 takes
// no new column, so each index is made again, with its triggers. An index holds the nodes lists show
// (LISTED_NODE), kept by triggers on nodes and publishers. (An FTS5 'delete' must name a row exactly
// as indexed, so every trigger applies that one rule.)
function nodeIndex(table: string, columns: string[], weights: string, listed = LISTED_NODE): string {
  const names = columns.join(', ');
  const of = (row: string) => columns.map((column) => `${row}.${column}`).join(', ');
  const installable = listed === LISTED_NODE ? '' : ' AND nothing_to_install = 0';
  const publishers = `seq, ${names} FROM nodes WHERE publisher_id = new.id AND status = 'NodeStatusActive'${installable}`;
  return `
CREATE VIRTUAL TABLE ${table} USING fts5(${names}, content = 'nodes', content_rowid = 'seq', prefix = '2 3 4');
INSERT INTO ${table}(${table}, rank) VALUES ('rank', 'bm25(${weights})');
INSERT INTO ${table}(rowid, ${names}) SELECT seq, ${names} FROM nodes WHERE ${listed('nodes')};
CREATE TRIGGER ${table}_insert AFTER INSERT ON nodes WHEN ${listed('new')} BEGIN
  INSERT INTO ${table}(rowid, ${names}) VALUES (new.seq, ${of('new')});
END;
CREATE TRIGGER ${table}_delete AFTER DELETE ON nodes WHEN ${listed('old')} BEGIN
  INSERT INTO ${table}(${table}, rowid, ${names}) VALUES ('delete', old.seq, ${of('old')});
END;
CREATE TRIGGER ${table}_update AFTER UPDATE OF ${names}, status${installable ? ', nothing_to_install' : ''} ON nodes BEGIN
  INSERT INTO ${table}(${table}, rowid, ${names}) SELECT 'delete', old.seq, ${of('old')} WHERE ${listed('old')};
  INSERT INTO ${table}(rowid, ${names}) SELECT new.seq, ${of('new')} WHERE ${listed('new')};
END;
CREATE TRIGGER ${table}_ban AFTER UPDATE OF status ON publishers
WHEN old.status != 'PublisherStatusBanned' AND new.status = 'PublisherStatusBanned' BEGIN
  INSERT INTO ${table}(${table}, rowid, ${names}) SELECT 'delete', ${publishers};
END;
CREATE TRIGGER ${table}_unban AFTER UPDATE OF status ON publishers
WHEN old.status = 'PublisherStatusBanned' AND new.status != 'PublisherStatusBanned' BEGIN
  INSERT INTO ${table}(rowid, ${names}) SELECT ${publishers};
END;
`;
}
/**
 * Every node's words written again by the store's rule (search_words, registered by db.ts), and both
 * full-text indexes made again with them, once their `triggers` are dropped: faster than each row's
 * triggers (100,000 nodes: 13.6 s against 45 s).
 */
const rewriteWords = (triggers: string[]) => `
${triggers.map((trigger) => `DROP TRIGGER ${trigger};`).join('\n')}
DROP TABLE nodes_fts;
DROP TABLE nodes_title_fts;
UPDATE nodes SET words = search_words(id, name);
${nodeIndex('nodes_fts', ['id', 'name', 'description', 'author', 'tags', 'words'], '10.0, 8.0, 1.0, 3.0, 4.0, 5.0')}
${nodeIndex('nodes_title_fts', ['id', 'name', 'tags', 'words'], '10.0, 8.0, 4.0, 5.0')}
`;
const searchWords = `
ALTER TABLE nodes ADD COLUMN words TEXT;${rewriteWords(
  ['nodes_fts_insert', 'nodes_fts_delete', 'nodes_fts_update', 'publishers_fts_ban', 'publishers_fts_unban'].concat([
    'nodes_title_fts_insert',
    'nodes_title_fts_delete',
    'nodes_title_fts_update',
    'publishers_title_fts_ban',
    'publishers_title_fts_unban',
  ]),
)}`;

/**
 * A node with versions of which none is Active or Pending (only Flagged, Banned or withdrawn ones) has
 * nothing to install: the lists and search leave it out (its page and its publisher's list still show
 * it). `nothing_to_install` is kept by triggers on versions, and the listed count and both full-text
 * indexes are made again with the rule that reads it.
 */
const NOTHING_TO_INSTALL = (node: string) =>
  `(EXISTS (SELECT 1 FROM versions v WHERE v.node_id = ${node}) AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.node_id = ${node} AND v.status IN ('NodeVersionStatusActive', 'NodeVersionStatusPending')))`;
const LISTED_INSTALLABLE = (row: string) => `${LISTED_NODE(row)} AND ${row}.nothing_to_install = 0`;
const installableFrom = (row: string) => `
  UPDATE nodes SET nothing_to_install = ${NOTHING_TO_INSTALL(`${row}.node_id`)}
  WHERE id = ${row}.node_id AND nothing_to_install IS NOT ${NOTHING_TO_INSTALL(`${row}.node_id`)};`;
const ftsTriggers = ['nodes_fts', 'nodes_title_fts'].flatMap((table) =>
  ['insert', 'delete', 'update', 'ban', 'unban'].map((event) => `${table}_${event}`),
);
/** The listing indexes (migration 'listing-covering-indexes'), which choose a page from the index alone. */
const LISTING_ORDERS = [
  ['nodes_by_created', 'created_at DESC'],
  ['nodes_by_downloads', 'downloads DESC'],
  ['nodes_by_rating', 'rating DESC'],
  ['nodes_by_name', 'coalesce(name, id) COLLATE NOCASE'],
  ['nodes_by_ranking', 'search_ranking DESC'],
];
const hideNothingToInstall = `
${ftsTriggers.map((trigger) => `DROP TRIGGER ${trigger};`).join('\n')}
DROP TRIGGER nodes_listed_insert;
DROP TRIGGER nodes_listed_delete;
DROP TRIGGER nodes_listed_update;
DROP TRIGGER publishers_listed_ban;
DROP TABLE nodes_fts;
DROP TABLE nodes_title_fts;
ALTER TABLE nodes ADD COLUMN nothing_to_install INTEGER NOT NULL DEFAULT 0;
UPDATE nodes SET nothing_to_install = ${NOTHING_TO_INSTALL('nodes.id')};
CREATE TRIGGER versions_installable_insert AFTER INSERT ON versions BEGIN${installableFrom('new')}
END;
CREATE TRIGGER versions_installable_update AFTER UPDATE OF status ON versions BEGIN${installableFrom('new')}
END;
CREATE TRIGGER versions_installable_delete AFTER DELETE ON versions BEGIN${installableFrom('old')}
END;
UPDATE counts SET value = (SELECT count(*) FROM nodes WHERE ${LISTED_INSTALLABLE('nodes')}) WHERE name = 'listed_nodes';
CREATE TRIGGER nodes_listed_insert AFTER INSERT ON nodes WHEN ${LISTED_INSTALLABLE('new')} BEGIN
  UPDATE counts SET value = value + 1 WHERE name = 'listed_nodes';
END;
CREATE TRIGGER nodes_listed_delete AFTER DELETE ON nodes WHEN ${LISTED_INSTALLABLE('old')} BEGIN
  UPDATE counts SET value = value - 1 WHERE name = 'listed_nodes';
END;
CREATE TRIGGER nodes_listed_update AFTER UPDATE OF status, publisher_id, nothing_to_install ON nodes
WHEN old.status IS NOT new.status OR old.publisher_id IS NOT new.publisher_id OR old.nothing_to_install IS NOT new.nothing_to_install BEGIN
  UPDATE counts SET value = value - (${LISTED_INSTALLABLE('old')}) + (${LISTED_INSTALLABLE('new')}) WHERE name = 'listed_nodes';
END;
CREATE TRIGGER publishers_listed_ban AFTER UPDATE OF status ON publishers
WHEN (old.status = 'PublisherStatusBanned') IS NOT (new.status = 'PublisherStatusBanned') BEGIN
  UPDATE counts SET value = value + (CASE new.status WHEN 'PublisherStatusBanned' THEN -1 ELSE 1 END)
    * (SELECT count(*) FROM nodes WHERE publisher_id = new.id AND status = 'NodeStatusActive' AND nothing_to_install = 0)
  WHERE name = 'listed_nodes';
END;
${LISTING_ORDERS.map(([index, order]) => `DROP INDEX ${index};\nCREATE INDEX ${index} ON nodes(status, ${order}, id, publisher_id, nothing_to_install);`).join('\n')}
${nodeIndex('nodes_fts', ['id', 'name', 'description', 'author', 'tags', 'words'], '10.0, 8.0, 1.0, 3.0, 4.0, 5.0', LISTED_INSTALLABLE)}
${nodeIndex('nodes_title_fts', ['id', 'name', 'tags', 'words'], '10.0, 8.0, 4.0, 5.0', LISTED_INSTALLABLE)}
`;

export const migrations: Migration[] = [
  { name: 'registry', sql: registry },
  {
    // AI proxy (DESIGN.md §4): tasks, sandbox result files, and callback deliveries to resume after a restart.
    name: 'proxy tasks, results and callback deliveries',
    sql: `
      CREATE TABLE proxy_tasks (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        user_id TEXT NOT NULL,
        mode TEXT NOT NULL,
        upstream_id TEXT,
        callback_url TEXT,
        created_at INTEGER NOT NULL,
        delay_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        status TEXT NOT NULL,
        view TEXT NOT NULL,
        credits INTEGER,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX proxy_tasks_user ON proxy_tasks(user_id);
      CREATE INDEX proxy_tasks_unfinished ON proxy_tasks(callback_url, status);

      CREATE TABLE proxy_results (
        name TEXT PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES proxy_tasks(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        creation_id TEXT NOT NULL,
        url TEXT,
        file TEXT,
        content_type TEXT,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX proxy_results_task ON proxy_results(task_id, position);
      CREATE INDEX proxy_results_expiry ON proxy_results(expires_at);

      CREATE TABLE proxy_deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        task_id TEXT NOT NULL REFERENCES proxy_tasks(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        body TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at INTEGER NOT NULL,
        last_error TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX proxy_deliveries_pending ON proxy_deliveries(state, task_id, seq);
    `,
  },
  { name: 'hide-banned-publishers', sql: hideBannedPublishers },
  { name: 'archive-claims', sql: archiveClaims },
  { name: 'search-titles', sql: searchTitles },
  { name: 'node-metadata', sql: nodeMetadata },
  { name: 'invitations', sql: INVITATIONS_SCHEMA },
  {
    // Sandbox quotas count the bytes of result files kept; files stored before this count as 0 (they expire within 24 h).
    name: 'proxy-result-sizes',
    sql: `
      ALTER TABLE proxy_results ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX proxy_tasks_by_user ON proxy_tasks(user_id, id);
    `,
  },
  { name: 'generations', sql: generations },
  {
    // The proxy's polls and deliveries claimed through the database (as on PostgreSQL, where several
    // instances share it): a forward task's next poll time, a delivery's lease and its holder.
    name: 'proxy-leases',
    sql: `
      ALTER TABLE proxy_tasks ADD COLUMN next_poll_at INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE proxy_deliveries ADD COLUMN lease_until INTEGER;
      ALTER TABLE proxy_deliveries ADD COLUMN lease_owner TEXT;
    `,
  },
  // The registry's scan of a version's archive (DESIGN.md §10): its findings, as JSON text.
  { name: 'scan-findings', sql: 'ALTER TABLE versions ADD COLUMN findings TEXT;' },
  // Semver precedence as sortable text (version-order.ts), filled for earlier rows after migrating (db.ts);
  // and a generation of the node's versions alone, which the kept lists of versions go by (a download
  // moves the node's generation, and dropped every kept list).
  {
    name: 'version-order',
    sql: `
      ALTER TABLE versions ADD COLUMN version_order TEXT;
      CREATE INDEX versions_by_order ON versions(node_id, status, version_order);
      ALTER TABLE nodes ADD COLUMN versions_generation INTEGER NOT NULL DEFAULT 0;
      DROP TRIGGER versions_generation_insert;
      CREATE TRIGGER versions_generation_insert AFTER INSERT ON versions BEGIN
        UPDATE nodes SET generation = generation + 1, versions_generation = versions_generation + 1 WHERE id = new.node_id;
      END;
      DROP TRIGGER versions_generation_update;
      CREATE TRIGGER versions_generation_update AFTER UPDATE ON versions BEGIN
        UPDATE nodes SET generation = generation + 1, versions_generation = versions_generation + 1 WHERE id IN (old.node_id, new.node_id);
      END;
      DROP TRIGGER versions_generation_delete;
      CREATE TRIGGER versions_generation_delete AFTER DELETE ON versions BEGIN
        UPDATE nodes SET generation = generation + 1, versions_generation = versions_generation + 1 WHERE id = old.node_id;
      END;
    `,
  },
  {
    // The listing orders with publisher_id: a page is chosen from the index alone (the banned-publisher
    // test reads it there), so a deep page does not read every row before it.
    name: 'listing-covering-indexes',
    sql: `
      DROP INDEX nodes_by_created;
      CREATE INDEX nodes_by_created ON nodes(status, created_at DESC, id, publisher_id);
      DROP INDEX nodes_by_downloads;
      CREATE INDEX nodes_by_downloads ON nodes(status, downloads DESC, id, publisher_id);
      DROP INDEX nodes_by_rating;
      CREATE INDEX nodes_by_rating ON nodes(status, rating DESC, id, publisher_id);
      DROP INDEX nodes_by_name;
      CREATE INDEX nodes_by_name ON nodes(status, coalesce(name, id) COLLATE NOCASE, id, publisher_id);
      DROP INDEX nodes_by_ranking;
      CREATE INDEX nodes_by_ranking ON nodes(status, search_ranking DESC, id, publisher_id);
    `,
  },
  { name: 'listed-count', sql: listedCount },
  { name: 'search-words', sql: searchWords },
  {
    // The rows the store fills when it opens (db.ts: a version without version_order, a node without
    // words, as an older nodereg writes them), found through indexes of those rows alone: once filled,
    // an open reads an empty index instead of every row, which made each start grow with the registry.
    name: 'unfilled-rows-indexes',
    sql: `
      CREATE INDEX nodes_unfilled_words ON nodes(seq) WHERE words IS NULL;
      CREATE INDEX versions_unfilled_order ON versions(id) WHERE version_order IS NULL;
    `,
  },
  // The host application's name is one word (search-words.ts): the nodes named after it lose the word `ui`.
  {
    name: 'search-words-host-name',
    sql: rewriteWords(
      ['nodes_fts', 'nodes_title_fts'].flatMap((table) =>
        ['insert', 'delete', 'update', 'ban', 'unban'].map((event) => `${table}_${event}`),
      ),
    ),
  },
  {
    // A publisher's nodes are listed a page at a time by id (GET /publishers/{id}/nodes): the page is chosen
    // in this index, not by reading and sorting every row of the publisher.
    name: 'publisher-nodes-index',
    sql: 'DROP INDEX nodes_by_publisher; CREATE INDEX nodes_by_publisher ON nodes(publisher_id, id, status);',
  },
  {
    // The node classes each version defines (node-classes.ts), found by name; the extraction's status and reason on the version.
    name: 'node-classes',
    sql: `
      ALTER TABLE versions ADD COLUMN app_node_extract_status TEXT;
      ALTER TABLE versions ADD COLUMN app_node_extract_reason TEXT;
      CREATE TABLE node_classes (
        version_id TEXT NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        name TEXT NOT NULL,
        definition TEXT NOT NULL,
        PRIMARY KEY (version_id, name)
      );
      CREATE INDEX node_classes_by_name ON node_classes(name);
    `,
  },
  {
    // The registry's own id (registry-id.ts), made at its first start and named in its storage's claim object.
    name: 'registry-identity',
    sql: 'CREATE TABLE registry_identity (id INTEGER PRIMARY KEY CHECK (id = 1), registry_id TEXT NOT NULL);',
  },
  {
    // Trusted publishing (store/trusts.ts): the CI workflows a publisher trusts, the publish tokens exchanged
    // for their OIDC tokens, and the signed provenance (a DSSE envelope) of a version published with one.
    name: 'trusted-publishing',
    sql: `
      CREATE TABLE trusts (
        id TEXT PRIMARY KEY,
        publisher_id TEXT NOT NULL REFERENCES publishers(id),
        node_id TEXT,
        issuer TEXT NOT NULL,
        repository TEXT NOT NULL,
        workflow TEXT NOT NULL,
        environment TEXT,
        ref TEXT,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX trusts_by_publisher ON trusts(publisher_id);
      CREATE TABLE oidc_exchanges (
        id TEXT PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        trust_id TEXT NOT NULL REFERENCES trusts(id),
        publisher_id TEXT NOT NULL,
        node_id TEXT,
        user_id TEXT NOT NULL,
        claims TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX oidc_exchanges_by_trust ON oidc_exchanges(trust_id);
      ALTER TABLE versions ADD COLUMN provenance TEXT;
    `,
  },
  {
    // The web pages' signed-in sessions, and the admin's queue of Flagged versions found by status (store/web.ts).
    name: 'web-sessions',
    sql: WEB_SESSIONS_TABLE,
  },
  {
    // The findings an admin approved for a node (approvals.ts): a later version whose high findings are all here is not flagged for them.
    name: 'approved-findings',
    sql: `
      CREATE TABLE approved_findings (
        node_id TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        rule TEXT NOT NULL,
        version_id TEXT,
        approved_at TEXT NOT NULL,
        PRIMARY KEY (node_id, fingerprint)
      );
    `,
  },
  {
    // Downloads already counted today, per client, node and version (store countDownload): a client
    // fetching the same archive again does not add to the node's downloads.
    name: 'download-days',
    sql: `
      CREATE TABLE download_days (
        day TEXT NOT NULL,
        key TEXT NOT NULL,
        PRIMARY KEY (day, key)
      );
    `,
  },
  {
    // Node ids compared by their look-alike form (lookalike.ts) when a node is created.
    name: 'node-lookalikes',
    sql: `CREATE INDEX nodes_by_lookalike ON nodes (${NODE_LOOKALIKE});`,
  },
  {
    // Search and the lists leave out a node with nothing to install (its versions only Flagged, Banned or withdrawn).
    name: 'hide-nothing-to-install',
    sql: hideNothingToInstall,
  },
  {
    // When a version's status last changed (archive-gc.ts): \`nodereg admin gc\` collects a Deleted
    // version's archive once its deletion is older than the grace period.
    name: 'version-status-changed',
    sql: `
      ALTER TABLE versions ADD COLUMN status_changed_at TEXT;
      CREATE TRIGGER versions_status_changed AFTER UPDATE OF status ON versions WHEN new.status IS NOT old.status BEGIN
        UPDATE versions SET status_changed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = new.id;
      END;
    `,
  },
  {
    // Invitations kept against an e-mail address until a user with it appears (address-invitations.ts).
    name: 'address-invitations',
    sql: ADDRESS_INVITATIONS_SCHEMA,
  },
  {
    // Users disabled and deleted by an admin (user-lifecycle.ts); either change voids cached authentications.
    name: 'user-lifecycle',
    sql: `${USER_LIFECYCLE_COLUMNS}
      CREATE TRIGGER users_generation_lifecycle AFTER UPDATE OF disabled_at, deleted_at ON users BEGIN
        UPDATE generations SET value = value + 1 WHERE name = 'tokens';
      END;`,
  },
  {
    // A publisher's webhooks (store/webhooks.ts).
    name: 'webhooks',
    sql: WEBHOOKS_SCHEMA,
  },
  {
    // The audit log of admin and owner actions (store/audit.ts).
    name: 'audit-log',
    sql: AUDIT_SCHEMA.sqlite,
  },
  { name: 'rating-apart-from-generation', sql: ratingApart },
];
