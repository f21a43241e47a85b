// Users and their tokens on SQLite.
import { randomUUID } from 'node:crypto';
import type { NewToken, RegistryStore, UserRow } from '../registry-store.js';
import { TOKEN_USE_GRANULARITY_MS } from '../registry-store.js';
import { count, decodeToken, decodeUser, first, only, optionalText, text } from '../rows.js';
import { now, type SqliteAccess } from './access.js';

/** Every column of a token but its hash, which never leaves the store. */
const TOKEN_COLUMNS = 'id, kind, user_id, publisher_id, name, prefix, created_at, last_used_at, revoked_at';

type UserStore = Pick<
  RegistryStore,
  | 'createUser'
  | 'getUser'
  | 'findUsers'
  | 'createToken'
  | 'useToken'
  | 'getToken'
  | 'listTokens'
  | 'revokeToken'
  | 'tokenGeneration'
  | 'ensureBootstrapAdmin'
>;

export const getUser = (access: SqliteAccess, id: string) =>
  first(access.all('SELECT * FROM users WHERE id = ?', id), decodeUser);

function insertToken(access: SqliteAccess, input: NewToken) {
  const id = randomUUID();
  access
    .prepare(
      `INSERT INTO tokens (id, kind, user_id, publisher_id, name, hash, prefix, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(id, input.kind, input.userId, input.publisherId ?? null, input.name, input.hash, input.prefix, now());
  return only(access.all(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = ?`, id), decodeToken, `token ${id}`);
}

function createUser(access: SqliteAccess, input: Parameters<RegistryStore['createUser']>[0]): UserRow {
  const id = input.id ?? randomUUID();
  access
    .prepare('INSERT INTO users (id, name, email, admin, created_at) VALUES (?, ?, ?, ?, ?)')
    .run(id, input.name, input.email ?? null, input.admin ? 1 : 0, now());
  if (input.token) insertToken(access, { kind: 'user', userId: id, ...input.token });
  return only(access.all('SELECT * FROM users WHERE id = ?', id), decodeUser, `user ${id}`);
}

/** The live token with this hash and its user; its use is recorded to the minute (a use within it costs no write). */
function useToken(access: SqliteAccess, recordUse: (id: string, at: string) => void, hash: string) {
  const token = first(
    access.all(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = ? AND revoked_at IS NULL`, hash),
    decodeToken,
  );
  if (!token) return undefined;
  if (!token.last_used_at || Date.now() - Date.parse(token.last_used_at) >= TOKEN_USE_GRANULARITY_MS) {
    token.last_used_at = now();
    recordUse(token.id, token.last_used_at);
  }
  const user = getUser(access, token.user_id);
  return user && { token, user };
}

function listTokens(access: SqliteAccess, filter: Parameters<RegistryStore['listTokens']>[0]) {
  const [where, value] =
    'userId' in filter
      ? ["user_id = ? AND kind = 'user'", filter.userId]
      : 'publisherId' in filter
        ? ['publisher_id = ?', filter.publisherId]
        : ['user_id = ?', filter.madeBy];
  return access
    .all(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE ${where} AND revoked_at IS NULL ORDER BY created_at, id`, value)
    .map(decodeToken);
}

function ensureBootstrapAdmin(
  access: SqliteAccess,
  userId: string,
  hash: string,
  prefix: string,
  keepLive?: boolean,
): boolean {
  const { prepare, all } = access;
  if (!getUser(access, userId))
    prepare('INSERT INTO users (id, name, admin, created_at) VALUES (?, ?, 1, ?)').run(userId, 'admin', now());
  else prepare('UPDATE users SET admin = 1 WHERE id = ?').run(userId);
  if (
    keepLive &&
    all(
      "SELECT 1 FROM tokens WHERE user_id = ? AND name = 'bootstrap' AND hash != ? AND revoked_at IS NULL",
      userId,
      hash,
    ).length
  )
    return false;
  const same = first(all('SELECT id, user_id FROM tokens WHERE hash = ?', hash), (row) => ({
    id: text(row, 'id'),
    userId: optionalText(row, 'user_id'),
  }));
  if (same && same.userId !== userId) throw new Error('the admin token is already the token of another user');
  prepare(
    "UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND name = 'bootstrap' AND hash != ? AND revoked_at IS NULL",
  ).run(now(), userId, hash);
  if (same) prepare('UPDATE tokens SET revoked_at = NULL WHERE id = ?').run(same.id);
  else insertToken(access, { kind: 'user', userId, name: 'bootstrap', hash, prefix });
  return true;
}

/** Users whose id, else e-mail (in any case), else name is `text`. */
function findUsers(access: SqliteAccess, text: string) {
  const byId = getUser(access, text);
  if (byId && !byId.deleted_at) return [byId];
  const byEmail = access.all(
    'SELECT * FROM users WHERE lower(email) = lower(?) AND deleted_at IS NULL ORDER BY created_at, id LIMIT 5',
    text,
  );
  return (
    byEmail.length
      ? byEmail
      : access.all('SELECT * FROM users WHERE name = ? AND deleted_at IS NULL ORDER BY created_at, id LIMIT 5', text)
  ).map(decodeUser);
}

export function sqliteUserStore(access: SqliteAccess): UserStore {
  const recordUse = access.writing((id: string, at: string) => {
    access.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?').run(at, id);
  });
  const creatingUser = access.writing((input: Parameters<RegistryStore['createUser']>[0]) => createUser(access, input));
  const bootstrapping = access.writing((userId: string, hash: string, prefix: string, keepLive?: boolean) =>
    ensureBootstrapAdmin(access, userId, hash, prefix, keepLive),
  );
  return {
    createUser: async (input) => creatingUser(input),
    getUser: async (id) => getUser(access, id),
    findUsers: async (text) => findUsers(access, text),
    createToken: async (input) => insertToken(access, input),
    useToken: async (hash) => useToken(access, recordUse, hash),
    getToken: async (id) => first(access.all(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = ?`, id), decodeToken),
    listTokens: async (filter) => listTokens(access, filter),
    async revokeToken(id) {
      access.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now(), id);
    },
    tokenGeneration: async () =>
      access.readOncePerTurn('tokens generation', () =>
        only(
          access.all("SELECT value FROM generations WHERE name = 'tokens'"),
          (row) => count(row, 'value'),
          'the tokens generation',
        ),
      ),
    ensureBootstrapAdmin: async (userId, hash, prefix, keepLive) => bootstrapping(userId, hash, prefix, keepLive),
  };
}
