// A version's place in semver precedence as text that sorts in byte order, kept beside the version
// (the column version_order) so that the store sorts a node's versions and picks its latest_version
// in SQL: in JavaScript every list read every Active version of its nodes and compared them as semver
// (one node with thousands of versions made every anonymous GET /nodes costly).
//
// `1.2.3` → 15-digit major, minor, patch (versions hold at most 15 digits: src/contract/version.ts),
// then `~` for a release or `-` and the pre-release identifiers ending in `!`, separated by `#`.
// A numeric identifier is `0`, its length in 3 digits and its digits (so it sorts as a number, below
// any alphanumeric one), an alphanumeric one `1` and its text. `!` < `#` < every identifier character,
// so a shorter run of equal identifiers sorts first, and `-` < `~` puts pre-releases below their release.

/**
 * The versions each store fills when it opens (stored before the column, or by an older nodereg), read
 * through an index of those rows alone (migration 'unfilled-rows-indexes'): nothing once all are filled.
 */
export const UNFILLED_VERSION_ORDER = 'SELECT id, version FROM versions WHERE version_order IS NULL';

const pad = (digits: string) => digits.padStart(15, '0');
const identifier = (id: string) => (/^\d+$/.test(id) ? `0${String(id.length).padStart(3, '0')}${id}` : `1${id}`);

/**
 * The sort key of a stored version (`X.Y.Z` or `X.Y.Z-pre`, as normalizeVersion gives it). Anything
 * else (none is stored; a row from before a rule, at most) gets "", below every version, rather than
 * stop the store from opening while it fills the keys.
 */
export function versionOrder(version: string): string {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:-([^+]*))?/.exec(version);
  if (!m) return '';
  const core = `${pad(m[1])}.${pad(m[2])}.${pad(m[3])}`;
  return m[4] === undefined ? `${core}~` : `${core}-${m[4].split('.').map(identifier).join('#')}!`;
}

/**
 * Highest first, and a version without its key (stored by an older nodereg sharing the database, until
 * the next start fills it) last on both stores: PostgreSQL would put it first.
 */
export const HIGHEST_FIRST = 'version_order DESC NULLS LAST';

/** The id of the highest Active version of node `n.value` that also passes `filter`. */
const highest = (filter: string) =>
  `(SELECT id FROM versions WHERE node_id = n.value AND status = 'NodeVersionStatusActive'${filter} ORDER BY ${HIGHEST_FIRST} LIMIT 1)`;

/**
 * The id of node `n.value`'s latest_version (DESIGN.md §3), as SQL that SQLite and PostgreSQL both
 * read: the highest Active release not deprecated, else the highest Active version not deprecated,
 * else the highest Active one. Each step walks the index versions_by_order down from the top and stops
 * at its first match, so a node's other versions are not read, however many it has.
 */
export const LATEST_VERSION_ID = `COALESCE(${highest(` AND NOT deprecated AND version_order LIKE '%~'`)}, ${highest(' AND NOT deprecated')}, ${highest('')})`;
