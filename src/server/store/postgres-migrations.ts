// The schema of the PostgreSQL store, applied in order once each under an advisory lock, so that
// instances starting together do not race (schema_migrations counts them). Append only. Its history
// begins at the shape the SQLite migrations reached ('node-metadata'): node metadata in one jsonb
// document, columns for what is searched, sorted or constrained.
import { INVITATIONS_SCHEMA } from './member-row.js';
import { ADDRESS_INVITATIONS_SCHEMA } from './address-invitations.js';
import { USER_LIFECYCLE_COLUMNS } from './user-lifecycle.js';
import { WEBHOOKS_SCHEMA } from './webhooks.js';
import { AUDIT_SCHEMA } from './audit.js';
import { WEB_SESSIONS_TABLE } from './web.js';
import type { Migration } from './migrations.js';
import { NODE_LOOKALIKE } from './lookalike.js';

/** An index built with CREATE INDEX CONCURRENTLY, outside the migration's transaction (migratePostgres). */
export interface ConcurrentIndex {
  name: string;
  /** What follows the index's name: `ON table USING …`. */
  on: string;
}

export interface PostgresMigration extends Migration {
  /** Built after the migration's transaction has committed; `sql` may then be empty. */
  concurrentIndexes?: ConcurrentIndex[];
}

/**
 * What a search of nodes matches and ranks, as its index holds it: the id and name weigh most, then the
 * tags and the split words (search-words.ts), the author, and the description. A query names it as it
 * is written here, so that PostgreSQL finds the index.
 */
export const SEARCH_VECTOR = `setweight(to_tsvector('simple', id), 'A') || setweight(to_tsvector('simple', coalesce(name, '')), 'A') ||
    setweight(to_tsvector('simple', coalesce(tags::text, '')), 'B') || setweight(to_tsvector('simple', coalesce(words, '')), 'B') ||
    setweight(to_tsvector('simple', coalesce(author, '')), 'C') || setweight(to_tsvector('simple', coalesce(description, '')), 'D')`;

const registry = `
CREATE TABLE users (
  id text PRIMARY KEY,
  name text NOT NULL,
  email text,
  admin boolean NOT NULL DEFAULT false,
  created_at text NOT NULL
);
CREATE TABLE publishers (
  id text PRIMARY KEY,
  name text,
  description text,
  logo text,
  source_code_repo text,
  support text,
  website text,
  status text NOT NULL DEFAULT 'PublisherStatusActive',
  created_at text NOT NULL
);
CREATE TABLE tokens (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('user', 'pat')),
  user_id text NOT NULL REFERENCES users(id),
  publisher_id text REFERENCES publishers(id),
  name text NOT NULL,
  hash text NOT NULL UNIQUE,
  prefix text NOT NULL,
  created_at text NOT NULL,
  last_used_at text,
  revoked_at text,
  CHECK ((kind = 'pat') = (publisher_id IS NOT NULL))
);
CREATE INDEX tokens_by_user ON tokens(user_id, kind);
CREATE INDEX tokens_by_publisher ON tokens(publisher_id);
CREATE TABLE members (
  id text PRIMARY KEY,
  publisher_id text NOT NULL REFERENCES publishers(id),
  user_id text NOT NULL REFERENCES users(id),
  role text NOT NULL CHECK (role IN ('owner', 'member')),
  created_at text NOT NULL,
  UNIQUE (publisher_id, user_id)
);
CREATE INDEX members_by_user ON members(user_id);

-- id is unique regardless of case (nodes_id_lower) and kept in the case it was first published in.
CREATE TABLE nodes (
  seq bigserial UNIQUE,
  id text PRIMARY KEY,
  publisher_id text NOT NULL REFERENCES publishers(id),
  name text,
  description text,
  author text,
  tags jsonb,
  search_ranking integer,
  status text NOT NULL DEFAULT 'NodeStatusActive',
  metadata jsonb NOT NULL DEFAULT '{}',
  downloads integer NOT NULL DEFAULT 0,
  rating double precision NOT NULL DEFAULT 0,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', id), 'A') || setweight(to_tsvector('simple', coalesce(name, '')), 'A') ||
    setweight(to_tsvector('simple', coalesce(tags::text, '')), 'B') ||
    setweight(to_tsvector('simple', coalesce(author, '')), 'C') || setweight(to_tsvector('simple', coalesce(description, '')), 'D')
  ) STORED
);
CREATE UNIQUE INDEX nodes_id_lower ON nodes(lower(id));
CREATE INDEX nodes_by_publisher ON nodes(publisher_id);
CREATE INDEX nodes_by_created ON nodes(status, created_at DESC, id);
CREATE INDEX nodes_by_downloads ON nodes(status, downloads DESC, id);
CREATE INDEX nodes_by_rating ON nodes(status, rating DESC, id);
CREATE INDEX nodes_by_name ON nodes(status, lower(coalesce(name, id)), id);
CREATE INDEX nodes_by_ranking ON nodes(status, search_ranking DESC NULLS LAST, id);
CREATE INDEX nodes_search ON nodes USING gin(search) WHERE status = 'NodeStatusActive';

CREATE TABLE versions (
  id text PRIMARY KEY,
  node_id text NOT NULL REFERENCES nodes(id),
  version text NOT NULL,
  changelog text,
  dependencies jsonb,
  supported_accelerators jsonb,
  supported_appui_frontend_version text,
  supported_appui_version text,
  supported_os jsonb,
  tags jsonb,
  tags_admin jsonb,
  deprecated boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'NodeVersionStatusPending',
  status_reason text,
  archive_sha256 text,
  archive_size bigint,
  uploaded_at text,
  created_at text NOT NULL,
  UNIQUE (node_id, version)
);
CREATE TABLE reviews (
  node_id text NOT NULL REFERENCES nodes(id),
  user_id text NOT NULL REFERENCES users(id),
  star integer NOT NULL CHECK (star BETWEEN 1 AND 5),
  created_at text NOT NULL,
  updated_at text NOT NULL,
  PRIMARY KEY (node_id, user_id)
);
CREATE TABLE archive_claims (
  version_id text PRIMARY KEY REFERENCES versions(id),
  key text NOT NULL,
  created_at text NOT NULL
);
`;

// The secret the upload and callback keys derive from (DIR/secret with SQLite): one row, shared by
// every instance.
// The AI proxy, shared by the instances (SQLite: 'proxy tasks, results and callback deliveries',
// 'proxy-result-sizes' and 'proxy-leases'). Times are milliseconds since the epoch.
const proxy = `
CREATE TABLE proxy_tasks (
  id text PRIMARY KEY,
  kind text NOT NULL,
  user_id text NOT NULL,
  mode text NOT NULL,
  upstream_id text,
  callback_url text,
  created_at bigint NOT NULL,
  delay_ms bigint NOT NULL,
  outcome text NOT NULL,
  status text NOT NULL,
  view text NOT NULL,
  credits bigint,
  updated_at bigint NOT NULL,
  next_poll_at bigint NOT NULL DEFAULT 0
);
CREATE INDEX proxy_tasks_by_user ON proxy_tasks(user_id, id);
CREATE INDEX proxy_tasks_unfinished ON proxy_tasks(callback_url, status);
CREATE TABLE proxy_results (
  name text PRIMARY KEY,
  task_id text NOT NULL REFERENCES proxy_tasks(id) ON DELETE CASCADE,
  position integer NOT NULL,
  creation_id text NOT NULL,
  url text,
  file text,
  content_type text,
  expires_at bigint NOT NULL,
  size bigint NOT NULL DEFAULT 0
);
CREATE INDEX proxy_results_task ON proxy_results(task_id, position);
CREATE INDEX proxy_results_expiry ON proxy_results(expires_at);
CREATE TABLE proxy_deliveries (
  seq bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  task_id text NOT NULL REFERENCES proxy_tasks(id) ON DELETE CASCADE,
  url text NOT NULL,
  body text NOT NULL,
  state text NOT NULL DEFAULT 'pending',
  attempts integer NOT NULL DEFAULT 0,
  next_at bigint NOT NULL,
  last_error text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  lease_until bigint,
  lease_owner text
);
CREATE INDEX proxy_deliveries_pending ON proxy_deliveries(state, task_id, seq);
`;

const serverSecret = `
CREATE TABLE server_secret (
  id integer PRIMARY KEY CHECK (id = 1),
  secret text NOT NULL
);
`;

// As the SQLite migration 'generations' (src/server/store/migrations.ts says why): each instance
// checks a node's generation, and the 'tokens' generation, on every read, so what one instance
// writes is seen by every other on its next request.
const generations = `
ALTER TABLE nodes ADD COLUMN generation bigint NOT NULL DEFAULT 0,
  ADD COLUMN rating_sum bigint NOT NULL DEFAULT 0,
  ADD COLUMN rating_count bigint NOT NULL DEFAULT 0;
UPDATE nodes SET rating_sum = r.total, rating_count = r.count
FROM (SELECT node_id, sum(star) AS total, count(*) AS count FROM reviews GROUP BY node_id) r WHERE r.node_id = nodes.id;

CREATE FUNCTION nodes_next_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.generation := OLD.generation + 1; RETURN NEW; END $$;
CREATE TRIGGER nodes_generation BEFORE UPDATE ON nodes FOR EACH ROW EXECUTE FUNCTION nodes_next_generation();

CREATE FUNCTION versions_touch_node() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN UPDATE nodes SET generation = generation WHERE id = OLD.node_id; END IF;
  IF TG_OP <> 'DELETE' THEN UPDATE nodes SET generation = generation WHERE id = NEW.node_id; END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER versions_generation AFTER INSERT OR UPDATE OR DELETE ON versions FOR EACH ROW EXECUTE FUNCTION versions_touch_node();

CREATE FUNCTION publishers_touch_nodes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN UPDATE nodes SET generation = generation WHERE publisher_id = NEW.id; RETURN NULL; END $$;
CREATE TRIGGER publishers_generation AFTER UPDATE ON publishers FOR EACH ROW EXECUTE FUNCTION publishers_touch_nodes();

CREATE FUNCTION reviews_rating() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE nodes SET rating_sum = rating_sum + NEW.star, rating_count = rating_count + 1,
      rating = (rating_sum + NEW.star)::float8 / (rating_count + 1) WHERE id = NEW.node_id;
  ELSIF TG_OP = 'UPDATE' THEN
    IF NEW.star <> OLD.star THEN
      UPDATE nodes SET rating_sum = rating_sum + NEW.star - OLD.star,
        rating = (rating_sum + NEW.star - OLD.star)::float8 / rating_count WHERE id = NEW.node_id;
    END IF;
  ELSE
    UPDATE nodes SET rating_sum = rating_sum - OLD.star, rating_count = rating_count - 1,
      rating = CASE WHEN rating_count = 1 THEN 0 ELSE (rating_sum - OLD.star)::float8 / (rating_count - 1) END
    WHERE id = OLD.node_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER reviews_rating AFTER INSERT OR UPDATE OR DELETE ON reviews FOR EACH ROW EXECUTE FUNCTION reviews_rating();

CREATE TABLE generations (name text PRIMARY KEY, value bigint NOT NULL);
INSERT INTO generations (name, value) VALUES ('tokens', 0);
CREATE FUNCTION tokens_next_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'tokens'; RETURN NULL; END $$;
CREATE TRIGGER tokens_generation_revoke AFTER UPDATE OF revoked_at OR DELETE ON tokens FOR EACH STATEMENT EXECUTE FUNCTION tokens_next_generation();
CREATE TRIGGER users_generation AFTER UPDATE OF admin OR DELETE ON users FOR EACH STATEMENT EXECUTE FUNCTION tokens_next_generation();
`;

// As the SQLite migration 'listed-count' (src/server/store/migrations.ts says why). A node's trigger reads
// its publisher FOR SHARE first: a ban waits for the node writes in flight, and a node write for a ban in
// flight, so the ban's count of the publisher's Active nodes sees them (READ COMMITTED: each statement
// of a trigger sees what committed before it) and the counter never drifts (test/server/store-contract).
// Inserts and deletes are counted once per statement: one row updated 100,000 times in one transaction
// took 77 s (each update walks the row's earlier versions), a bulk insert now moves it once.
const listedCount = `
CREATE TABLE counts (name text PRIMARY KEY, value bigint NOT NULL);
INSERT INTO counts (name, value) SELECT 'listed_nodes', count(*) FROM nodes n WHERE n.status = 'NodeStatusActive'
  AND NOT EXISTS (SELECT 1 FROM publishers p WHERE p.id = n.publisher_id AND p.status = 'PublisherStatusBanned');
CREATE FUNCTION nodes_count_listed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE delta bigint;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    PERFORM 1 FROM publishers WHERE id IN (OLD.publisher_id, NEW.publisher_id) FOR SHARE;
    SELECT coalesce(sum(n.sign), 0) INTO delta
      FROM (VALUES (OLD.status, OLD.publisher_id, -1), (NEW.status, NEW.publisher_id, 1)) AS n(status, publisher_id, sign) WHERE n.status = 'NodeStatusActive'
      AND NOT EXISTS (SELECT 1 FROM publishers p WHERE p.id = n.publisher_id AND p.status = 'PublisherStatusBanned');
  ELSE
    PERFORM 1 FROM publishers WHERE id IN (SELECT publisher_id FROM changed) FOR SHARE;
    SELECT count(*) * (CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END) INTO delta FROM changed c WHERE c.status = 'NodeStatusActive'
      AND NOT EXISTS (SELECT 1 FROM publishers p WHERE p.id = c.publisher_id AND p.status = 'PublisherStatusBanned');
  END IF;
  IF delta <> 0 THEN UPDATE counts SET value = value + delta WHERE name = 'listed_nodes'; END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER nodes_listed_insert AFTER INSERT ON nodes REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION nodes_count_listed();
CREATE TRIGGER nodes_listed_delete AFTER DELETE ON nodes REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION nodes_count_listed();
CREATE TRIGGER nodes_listed_update AFTER UPDATE OF status, publisher_id ON nodes FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.publisher_id IS DISTINCT FROM NEW.publisher_id) EXECUTE FUNCTION nodes_count_listed();
CREATE FUNCTION publishers_count_listed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE counts SET value = value + (CASE WHEN NEW.status = 'PublisherStatusBanned' THEN -1 ELSE 1 END)
    * (SELECT count(*) FROM nodes WHERE publisher_id = NEW.id AND status = 'NodeStatusActive')
  WHERE name = 'listed_nodes';
  RETURN NULL;
END $$;
CREATE TRIGGER publishers_listed AFTER UPDATE OF status ON publishers FOR EACH ROW
  WHEN ((OLD.status = 'PublisherStatusBanned') IS DISTINCT FROM (NEW.status = 'PublisherStatusBanned')) EXECUTE FUNCTION publishers_count_listed();
`;

const VERSION_ORDER_TRIGGER = `
CREATE OR REPLACE FUNCTION version_order_of(v text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  m text[];
  parts text[] := '{}';
  part text;
BEGIN
  m := regexp_match(v, '^([0-9]+)\\.([0-9]+)\\.([0-9]+)(?:-([^+]*))?');
  IF m IS NULL THEN RETURN ''; END IF;
  IF m[4] IS NULL THEN
    RETURN lpad(m[1], 15, '0') || '.' || lpad(m[2], 15, '0') || '.' || lpad(m[3], 15, '0') || '~';
  END IF;
  FOREACH part IN ARRAY CASE WHEN m[4] = '' THEN ARRAY[''] ELSE string_to_array(m[4], '.') END LOOP
    parts := parts || CASE WHEN part ~ '^[0-9]+$' THEN '0' || lpad(length(part)::text, 3, '0') || part ELSE '1' || part END;
  END LOOP;
  RETURN lpad(m[1], 15, '0') || '.' || lpad(m[2], 15, '0') || '.' || lpad(m[3], 15, '0') || '-' || array_to_string(parts, '#') || '!';
END $$;
CREATE OR REPLACE FUNCTION versions_fill_order() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.version_order IS NULL THEN NEW.version_order := version_order_of(NEW.version); END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS versions_fill_order ON versions;
CREATE TRIGGER versions_fill_order BEFORE INSERT OR UPDATE OF version, version_order ON versions
  FOR EACH ROW WHEN (NEW.version_order IS NULL) EXECUTE FUNCTION versions_fill_order();
`;

// As the SQLite migration 'hide-nothing-to-install' (src/server/store/migrations.ts says why); it can run
// again over itself, as a test that takes migrations back does. A version's
// trigger locks its node's row first, so that two versions of one node changing at once are counted one
// after the other (READ COMMITTED: the second statement sees the first's committed version).
const NOTHING_TO_INSTALL = (node: string) =>
  `(EXISTS (SELECT 1 FROM versions v WHERE v.node_id = ${node}) AND NOT EXISTS (SELECT 1 FROM versions v WHERE v.node_id = ${node} AND v.status IN ('NodeVersionStatusActive', 'NodeVersionStatusPending')))`;
const LISTED_ROW = (row: string) => `${row}.status = 'NodeStatusActive' AND NOT ${row}.nothing_to_install
      AND NOT EXISTS (SELECT 1 FROM publishers p WHERE p.id = ${row}.publisher_id AND p.status = 'PublisherStatusBanned')`;
const hideNothingToInstall = `
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS nothing_to_install boolean NOT NULL DEFAULT false;
UPDATE nodes SET nothing_to_install = ${NOTHING_TO_INSTALL('nodes.id')};
CREATE OR REPLACE FUNCTION versions_installable() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE target text := CASE WHEN TG_OP = 'DELETE' THEN OLD.node_id ELSE NEW.node_id END;
BEGIN
  PERFORM 1 FROM nodes WHERE id = target FOR UPDATE;
  UPDATE nodes SET nothing_to_install = ${NOTHING_TO_INSTALL('target')}
    WHERE id = target AND nothing_to_install IS DISTINCT FROM ${NOTHING_TO_INSTALL('target')};
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS versions_installable ON versions;
CREATE TRIGGER versions_installable AFTER INSERT OR DELETE OR UPDATE OF status ON versions
  FOR EACH ROW EXECUTE FUNCTION versions_installable();
CREATE OR REPLACE FUNCTION nodes_count_listed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE delta bigint;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    PERFORM 1 FROM publishers WHERE id IN (OLD.publisher_id, NEW.publisher_id) FOR SHARE;
    SELECT coalesce(sum(n.sign), 0) INTO delta
      FROM (VALUES (OLD.status, OLD.publisher_id, OLD.nothing_to_install, -1), (NEW.status, NEW.publisher_id, NEW.nothing_to_install, 1))
        AS n(status, publisher_id, nothing_to_install, sign)
      WHERE ${LISTED_ROW('n')};
  ELSE
    PERFORM 1 FROM publishers WHERE id IN (SELECT publisher_id FROM changed) FOR SHARE;
    SELECT count(*) * (CASE TG_OP WHEN 'INSERT' THEN 1 ELSE -1 END) INTO delta FROM changed c WHERE ${LISTED_ROW('c')};
  END IF;
  IF delta <> 0 THEN UPDATE counts SET value = value + delta WHERE name = 'listed_nodes'; END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS nodes_listed_update ON nodes;
CREATE TRIGGER nodes_listed_update AFTER UPDATE OF status, publisher_id, nothing_to_install ON nodes FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.publisher_id IS DISTINCT FROM NEW.publisher_id
    OR OLD.nothing_to_install IS DISTINCT FROM NEW.nothing_to_install) EXECUTE FUNCTION nodes_count_listed();
CREATE OR REPLACE FUNCTION publishers_count_listed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE counts SET value = value + (CASE WHEN NEW.status = 'PublisherStatusBanned' THEN -1 ELSE 1 END)
    * (SELECT count(*) FROM nodes WHERE publisher_id = NEW.id AND status = 'NodeStatusActive' AND NOT nothing_to_install)
  WHERE name = 'listed_nodes';
  RETURN NULL;
END $$;
UPDATE counts SET value = (SELECT count(*) FROM nodes n WHERE ${LISTED_ROW('n')}) WHERE name = 'listed_nodes';
${[
  ['nodes_by_created', 'created_at DESC'],
  ['nodes_by_downloads', 'downloads DESC'],
  ['nodes_by_rating', 'rating DESC'],
  ['nodes_by_name', 'lower(coalesce(name, id))'],
  ['nodes_by_ranking', 'search_ranking DESC NULLS LAST'],
]
  .map(
    ([index, order]) =>
      `DROP INDEX IF EXISTS ${index};\nCREATE INDEX ${index} ON nodes(status, ${order}, id) INCLUDE (publisher_id, seq, nothing_to_install);`,
  )
  .join('\n')}
`;

// A review as one statement: the node's row locked first (so the generation before and after are this
// review's alone), the review upserted (the trigger reviews_rating keeps the node's sum and count), and
// the node's state (NodeState) and rating after it, with the generation before it.
const reviewFunction = `
CREATE OR REPLACE FUNCTION review_node(reviewed text, reviewer text, stars integer, stamp text)
RETURNS TABLE (id text, publisher_id text, status text, created_at text, generation bigint, rating double precision,
  previous_generation bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE before bigint;
BEGIN
  SELECT n.generation INTO before FROM nodes n WHERE n.id = reviewed FOR UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  INSERT INTO reviews (node_id, user_id, star, created_at, updated_at) VALUES (reviewed, reviewer, stars, stamp, stamp)
    ON CONFLICT (node_id, user_id) DO UPDATE SET star = excluded.star, updated_at = excluded.updated_at;
  RETURN QUERY SELECT n.id, n.publisher_id, n.status, n.created_at, n.generation, n.rating, before
    FROM nodes n WHERE n.id = reviewed;
END $$;
`;

// Every write to a node's row, and to a generation, is announced to the instances that LISTEN
// (store/postgres/changes.ts), at its commit.
const changeNotices = `
CREATE OR REPLACE FUNCTION nodes_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('nodereg_changes', 'node ' || lower(CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END));
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS nodes_notice ON nodes;
CREATE TRIGGER nodes_notice AFTER INSERT OR UPDATE OR DELETE ON nodes FOR EACH ROW EXECUTE FUNCTION nodes_notice();
CREATE OR REPLACE FUNCTION generations_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_notify('nodereg_changes', 'generation ' || NEW.name); RETURN NULL; END $$;
DROP TRIGGER IF EXISTS generations_notice ON generations;
CREATE TRIGGER generations_notice AFTER UPDATE ON generations FOR EACH ROW EXECUTE FUNCTION generations_notice();
`;

// As the SQLite migration 'rating-apart-from-generation' (src/server/store/migrations.ts says why): an
// update that moves the rating's sum or count (a review's, through reviews_rating) leaves the
// generation. rate_node, which replaces review_node, refuses the node's publisher's members itself (no
// role is read before it), and says which transaction changed the rating, if the review changed it: the
// change notice of that transaction names it (store/postgres/changes.ts). Each write to a node's row is also announced with
// the node's state after it ('stamp {...}'), which instances keep as told instead of asking again.
const ratingApart = `
CREATE OR REPLACE FUNCTION nodes_next_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.rating_sum IS DISTINCT FROM OLD.rating_sum OR NEW.rating_count IS DISTINCT FROM OLD.rating_count THEN
    RETURN NEW;
  END IF;
  NEW.generation := OLD.generation + 1;
  RETURN NEW;
END $$;
CREATE OR REPLACE FUNCTION rate_node(reviewed text, reviewer text, stars integer, stamp text)
RETURNS TABLE (id text, publisher_id text, status text, created_at text, generation bigint, rating double precision,
  member boolean, changed_by text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE owner text; changer text;
BEGIN
  SELECT n.publisher_id INTO owner FROM nodes n WHERE n.id = reviewed;
  IF NOT FOUND THEN RETURN; END IF;
  IF EXISTS (SELECT 1 FROM members m WHERE m.publisher_id = owner AND m.user_id = reviewer) THEN
    RETURN QUERY SELECT n.id, n.publisher_id, n.status, n.created_at, n.generation, n.rating, true, NULL::text
      FROM nodes n WHERE n.id = reviewed;
    RETURN;
  END IF;
  INSERT INTO reviews (node_id, user_id, star, created_at, updated_at) VALUES (reviewed, reviewer, stars, stamp, stamp)
    ON CONFLICT (node_id, user_id) DO UPDATE SET star = excluded.star, updated_at = excluded.updated_at;
  -- this transaction wrote the node's row (its rating moved), so its change notice will name it
  IF EXISTS (SELECT 1 FROM nodes n WHERE n.id = reviewed AND n.xmin = xid(pg_current_xact_id())) THEN
    changer := txid_current()::text;
  END IF;
  RETURN QUERY SELECT n.id, n.publisher_id, n.status, n.created_at, n.generation, n.rating, false, changer
    FROM nodes n WHERE n.id = reviewed;
END $$;
CREATE OR REPLACE FUNCTION nodes_notice() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'UPDATE' OR NEW.generation <> OLD.generation THEN
    PERFORM pg_notify('nodereg_changes', 'node ' || lower(CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END));
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('nodereg_changes', 'stamp ' || json_build_object('transaction', txid_current()::text,
      'id', NEW.id, 'publisher_id', NEW.publisher_id, 'status', NEW.status, 'created_at', NEW.created_at,
      'generation', NEW.generation, 'rating', NEW.rating)::text);
  END IF;
  RETURN NULL;
END $$;
`;

export const postgresMigrations: PostgresMigration[] = [
  { name: 'registry (as of SQLite node-metadata)', sql: registry },
  { name: 'server-secret', sql: serverSecret },
  { name: 'invitations', sql: INVITATIONS_SCHEMA },
  { name: 'generations', sql: generations },
  { name: 'proxy', sql: proxy },
  // The registry's scan of a version's archive (DESIGN.md §10): its findings.
  { name: 'scan-findings', sql: 'ALTER TABLE versions ADD COLUMN findings jsonb;' },
  // Semver precedence as sortable text (version-order.ts), compared byte by byte whatever the database's
  // collation; filled for earlier rows after migrating (migratePostgres). And a generation of the node's
  // versions alone, which the kept lists of versions go by (a download moves the node's generation).
  {
    name: 'version-order',
    sql: `
      ALTER TABLE versions ADD COLUMN version_order text COLLATE "C";
      CREATE INDEX versions_by_order ON versions(node_id, status, version_order DESC NULLS LAST);
      ALTER TABLE nodes ADD COLUMN versions_generation bigint NOT NULL DEFAULT 0;
      CREATE OR REPLACE FUNCTION versions_touch_node() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP <> 'INSERT' THEN UPDATE nodes SET versions_generation = versions_generation + 1 WHERE id = OLD.node_id; END IF;
        IF TG_OP <> 'DELETE' THEN UPDATE nodes SET versions_generation = versions_generation + 1 WHERE id = NEW.node_id; END IF;
        RETURN NULL;
      END $$;
    `,
  },
  {
    // The listing orders carry publisher_id and seq: a page is chosen by an index-only scan, so a deep page
    // does not read every row before it.
    name: 'listing-covering-indexes',
    sql: `
      DROP INDEX nodes_by_created;
      CREATE INDEX nodes_by_created ON nodes(status, created_at DESC, id) INCLUDE (publisher_id, seq);
      DROP INDEX nodes_by_downloads;
      CREATE INDEX nodes_by_downloads ON nodes(status, downloads DESC, id) INCLUDE (publisher_id, seq);
      DROP INDEX nodes_by_rating;
      CREATE INDEX nodes_by_rating ON nodes(status, rating DESC, id) INCLUDE (publisher_id, seq);
      DROP INDEX nodes_by_name;
      CREATE INDEX nodes_by_name ON nodes(status, lower(coalesce(name, id)), id) INCLUDE (publisher_id, seq);
      DROP INDEX nodes_by_ranking;
      CREATE INDEX nodes_by_ranking ON nodes(status, search_ranking DESC NULLS LAST, id) INCLUDE (publisher_id, seq);
    `,
  },
  { name: 'listed-count', sql: listedCount },
  {
    // The split words of ids and names (search-words.ts), written by the store and filled for earlier rows
    // after migrating (migratePostgres). Until 2026-12 this migration also rebuilt the generated column
    // `search` with them, a rewrite of the whole table under the migration's lock that stopped every
    // other instance's reads of nodes meanwhile; the index of migration 'search-index-concurrently' now
    // holds them, and an older instance keeps searching its `search` column.
    name: 'search-words',
    sql: 'ALTER TABLE nodes ADD COLUMN words text;',
  },
  {
    // The rows migratePostgres fills (a version without version_order, a node without words, as an older
    // nodereg writes them), found through indexes of those rows alone: once filled, each start reads an
    // empty index instead of every row.
    name: 'unfilled-rows-indexes',
    sql: `
      CREATE INDEX nodes_unfilled_words ON nodes(id) WHERE words IS NULL;
      CREATE INDEX versions_unfilled_order ON versions(id) WHERE version_order IS NULL;
    `,
  },
  {
    // The host application's name is one word (search-words.ts): the words of the nodes that hold it are
    // emptied here and written again by migratePostgres's fill, in the same transaction.
    name: 'search-words-host-name',
    sql: `UPDATE nodes SET words = NULL WHERE id ILIKE '%comfyui%' OR name ILIKE '%comfyui%'`,
  },
  {
    // A publisher's nodes are listed a page at a time by id (GET /publishers/{id}/nodes): the page is chosen
    // in this index, not by reading and sorting every row of the publisher.
    name: 'publisher-nodes-index',
    sql: 'DROP INDEX nodes_by_publisher; CREATE INDEX nodes_by_publisher ON nodes(publisher_id, id) INCLUDE (status, seq);',
  },
  {
    // What a search matches and ranks, the id, name, tags, words, author and description (SEARCH_VECTOR),
    // in an index built concurrently after the migration's transaction: the instances answer meanwhile.
    name: 'search-index-concurrently',
    sql: '',
    concurrentIndexes: [
      { name: 'nodes_search_vector', on: `ON nodes USING gin((${SEARCH_VECTOR})) WHERE status = 'NodeStatusActive'` },
    ],
  },
  {
    // A version an older nodereg inserts without its sort key (instances of two builds share the database
    // during a rolling upgrade) gets it from this trigger at once, so latest_version is the same through
    // every instance; versionOrder (version-order.ts) written in SQL, and held equal to it by a test.
    name: 'version-order-trigger',
    sql: VERSION_ORDER_TRIGGER,
  },
  {
    // The node classes each version defines (node-classes.ts), found by name; the extraction's status and reason on the version.
    name: 'node-classes',
    sql: `
      ALTER TABLE versions ADD COLUMN IF NOT EXISTS app_node_extract_status TEXT;
      ALTER TABLE versions ADD COLUMN IF NOT EXISTS app_node_extract_reason TEXT;
      CREATE TABLE IF NOT EXISTS node_classes (
        version_id TEXT NOT NULL REFERENCES versions(id) ON DELETE CASCADE,
        node_id TEXT NOT NULL,
        name TEXT NOT NULL,
        definition JSONB NOT NULL,
        PRIMARY KEY (version_id, name)
      );
      CREATE INDEX IF NOT EXISTS node_classes_by_name ON node_classes(name);
    `,
  },
  {
    // The registry's own id (registry-id.ts), made by its first instance and named in its storage's claim object.
    name: 'registry-identity',
    sql: 'CREATE TABLE IF NOT EXISTS registry_identity (id integer PRIMARY KEY CHECK (id = 1), registry_id text NOT NULL);',
  },
  {
    // Trusted publishing (store/trusts.ts): the CI workflows a publisher trusts, the publish tokens exchanged
    // for their OIDC tokens, and the signed provenance (a DSSE envelope) of a version published with one.
    name: 'trusted-publishing',
    sql: `
      CREATE TABLE IF NOT EXISTS trusts (
        id text PRIMARY KEY,
        publisher_id text NOT NULL REFERENCES publishers(id),
        node_id text,
        issuer text NOT NULL,
        repository text NOT NULL,
        workflow text NOT NULL,
        environment text,
        ref text,
        created_by text NOT NULL,
        created_at text NOT NULL
      );
      CREATE INDEX IF NOT EXISTS trusts_by_publisher ON trusts(publisher_id);
      CREATE TABLE IF NOT EXISTS oidc_exchanges (
        id text PRIMARY KEY,
        hash text NOT NULL UNIQUE,
        trust_id text NOT NULL REFERENCES trusts(id),
        publisher_id text NOT NULL,
        node_id text,
        user_id text NOT NULL,
        claims text NOT NULL,
        expires_at text NOT NULL,
        created_at text NOT NULL
      );
      CREATE INDEX IF NOT EXISTS oidc_exchanges_by_trust ON oidc_exchanges(trust_id);
      ALTER TABLE versions ADD COLUMN IF NOT EXISTS provenance text;
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
      CREATE TABLE IF NOT EXISTS approved_findings (
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
      CREATE TABLE IF NOT EXISTS download_days (
        day TEXT NOT NULL,
        key TEXT NOT NULL,
        PRIMARY KEY (day, key)
      );
    `,
  },
  {
    // Node ids compared by their look-alike form (lookalike.ts) when a node is created.
    name: 'node-lookalikes',
    sql: `CREATE INDEX IF NOT EXISTS nodes_by_lookalike ON nodes (${NODE_LOOKALIKE});`,
  },
  {
    // Search and the lists leave out a node with nothing to install (its versions only Flagged, Banned or withdrawn).
    name: 'hide-nothing-to-install',
    sql: hideNothingToInstall,
  },
  {
    // As the SQLite migration 'version-status-changed': when a version's status last changed, for \`nodereg admin gc\`.
    name: 'version-status-changed',
    sql: `
      ALTER TABLE versions ADD COLUMN IF NOT EXISTS status_changed_at text;
      CREATE OR REPLACE FUNCTION versions_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN NEW.status_changed_at := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'); RETURN NEW; END $$;
      DROP TRIGGER IF EXISTS versions_status_changed ON versions;
      CREATE TRIGGER versions_status_changed BEFORE UPDATE OF status ON versions FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION versions_status_changed();
    `,
  },
  {
    // As the SQLite migration 'address-invitations': invitations kept against an e-mail address.
    name: 'address-invitations',
    sql: ADDRESS_INVITATIONS_SCHEMA,
  },
  {
    // Users disabled and deleted by an admin (user-lifecycle.ts); either change voids cached authentications.
    name: 'user-lifecycle',
    sql: `
      ALTER TABLE users ADD COLUMN IF NOT EXISTS disabled_at TEXT;
      ALTER TABLE users ADD COLUMN IF NOT EXISTS deleted_at TEXT;
      DROP TRIGGER IF EXISTS users_generation_lifecycle ON users;
      CREATE TRIGGER users_generation_lifecycle AFTER UPDATE OF disabled_at, deleted_at ON users
        FOR EACH STATEMENT EXECUTE FUNCTION tokens_next_generation();`,
  },
  {
    // A review in one statement (store/postgres/reviews.ts): one round trip and one commit.
    name: 'review-function',
    sql: reviewFunction,
  },
  {
    // What instances keep of a node's state and of the generations is dropped on these (store/postgres/changes.ts).
    name: 'change-notices',
    sql: changeNotices,
  },
  {
    // A publisher's webhooks (store/webhooks.ts).
    name: 'webhooks',
    sql: WEBHOOKS_SCHEMA,
  },
  {
    // The requests of each caller in the current minute, counted by every instance (store countRequest).
    // Unlogged: a count lost in a crash only gives its callers a fresh minute.
    name: 'rate-windows',
    sql: 'CREATE UNLOGGED TABLE IF NOT EXISTS rate_windows (key text PRIMARY KEY, win bigint NOT NULL, used integer NOT NULL);',
  },
  {
    // The audit log of admin and owner actions (store/audit.ts).
    name: 'audit-log',
    sql: AUDIT_SCHEMA.postgres,
  },
  { name: 'rating-apart-from-generation', sql: ratingApart },
];
