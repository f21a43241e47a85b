// Users and their tokens on PostgreSQL.
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import type { NewToken, RegistryStore, TokenRow } from '../registry-store.js';
import { TOKEN_USE_GRANULARITY_MS } from '../registry-store.js';
import { count, decodeToken, decodeUser, first, only, text } from '../rows.js';
import { now, type Sql } from './columns.js';

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

/** Every column of a token but its hash, which never leaves the store. */
const tokenColumns = (db: Sql) =>
  db`id, kind, user_id, publisher_id, name, prefix, created_at, last_used_at, revoked_at`;

export const getUser = async (db: Sql, id: string) => first(await db`SELECT * FROM users WHERE id = ${id}`, decodeUser);

async function insertToken(db: Sql, input: NewToken): Promise<TokenRow> {
  const rows = await db`
    INSERT INTO tokens (id, kind, user_id, publisher_id, name, hash, prefix, created_at)
    VALUES (${randomUUID()}, ${input.kind}, ${input.userId}, ${input.publisherId ?? null}, ${input.name}, ${input.hash}, ${input.prefix}, ${now()})
    RETURNING ${tokenColumns(db)}`;
  return only(rows, decodeToken, 'the new token');
}

function createUser(sql: postgres.Sql, input: Parameters<RegistryStore['createUser']>[0]) {
  return sql.begin(async (tx) => {
    const id = input.id ?? randomUUID();
    await tx`INSERT INTO users (id, name, email, admin, created_at) VALUES (${id}, ${input.name}, ${input.email ?? null}, ${input.admin ?? false}, ${now()})`;
    if (input.token) await insertToken(tx, { kind: 'user', userId: id, ...input.token });
    return only(await tx`SELECT * FROM users WHERE id = ${id}`, decodeUser, `user ${id}`);
  });
}

/** The live token with this hash and its user; its use is recorded to the minute (a use within it costs no write). */
async function useToken(sql: postgres.Sql, hash: string) {
  const token = first(
    await sql`SELECT ${tokenColumns(sql)} FROM tokens WHERE hash = ${hash} AND revoked_at IS NULL`,
    decodeToken,
  );
  if (!token) return undefined;
  if (!token.last_used_at || Date.now() - Date.parse(token.last_used_at) >= TOKEN_USE_GRANULARITY_MS) {
    token.last_used_at = now();
    await sql`UPDATE tokens SET last_used_at = ${token.last_used_at} WHERE id = ${token.id}`;
  }
  const user = await getUser(sql, token.user_id);
  return user && { token, user };
}

async function listTokens(sql: postgres.Sql, filter: Parameters<RegistryStore['listTokens']>[0]) {
  const where =
    'userId' in filter
      ? sql`user_id = ${filter.userId} AND kind = 'user'`
      : 'publisherId' in filter
        ? sql`publisher_id = ${filter.publisherId}`
        : sql`user_id = ${filter.madeBy}`;
  const rows =
    await sql`SELECT ${tokenColumns(sql)} FROM tokens WHERE ${where} AND revoked_at IS NULL ORDER BY created_at, id`;
  return rows.map(decodeToken);
}

function ensureBootstrapAdmin(sql: postgres.Sql, userId: string, hash: string, prefix: string, keepLive?: boolean) {
  return sql.begin(async (tx) => {
    // (The admin's row is locked from here: instances starting together take turns.)
    await tx`INSERT INTO users (id, name, admin, created_at) VALUES (${userId}, 'admin', true, ${now()})
             ON CONFLICT (id) DO UPDATE SET admin = true`;
    if (
      keepLive &&
      (
        await tx`SELECT 1 FROM tokens WHERE user_id = ${userId} AND name = 'bootstrap' AND hash != ${hash} AND revoked_at IS NULL LIMIT 1`
      ).length
    )
      return false;
    const same = first(await tx`SELECT id, user_id FROM tokens WHERE hash = ${hash} FOR UPDATE`, (row) => ({
      id: text(row, 'id'),
      userId: text(row, 'user_id'),
    }));
    if (same && same.userId !== userId) throw new Error('the admin token is already the token of another user');
    await tx`UPDATE tokens SET revoked_at = ${now()} WHERE user_id = ${userId} AND name = 'bootstrap' AND hash != ${hash} AND revoked_at IS NULL`;
    if (same) await tx`UPDATE tokens SET revoked_at = NULL WHERE id = ${same.id}`;
    else await insertToken(tx, { kind: 'user', userId, name: 'bootstrap', hash, prefix });
    return true;
  });
}

/** Users whose id, else e-mail (in any case), else name is `text`. */
async function findUsers(sql: postgres.Sql, text: string) {
  const byId = await getUser(sql, text);
  if (byId && !byId.deleted_at) return [byId];
  const byEmail =
    await sql`SELECT * FROM users WHERE lower(email) = lower(${text}) AND deleted_at IS NULL ORDER BY created_at, id LIMIT 5`;
  return (
    byEmail.length
      ? byEmail
      : await sql`SELECT * FROM users WHERE name = ${text} AND deleted_at IS NULL ORDER BY created_at, id LIMIT 5`
  ).map(decodeUser);
}

export function postgresUserStore(sql: postgres.Sql): UserStore {
  return {
    createUser: (input) => createUser(sql, input),
    getUser: (id) => getUser(sql, id),
    findUsers: (text) => findUsers(sql, text),
    createToken: (input) => insertToken(sql, input),
    useToken: (hash) => useToken(sql, hash),
    getToken: async (id) => first(await sql`SELECT ${tokenColumns(sql)} FROM tokens WHERE id = ${id}`, decodeToken),
    listTokens: (filter) => listTokens(sql, filter),
    async revokeToken(id) {
      await sql`UPDATE tokens SET revoked_at = ${now()} WHERE id = ${id} AND revoked_at IS NULL`;
    },
    tokenGeneration: async () =>
      only(
        await sql`SELECT value FROM generations WHERE name = 'tokens'`,
        (row) => count(row, 'value'),
        'the tokens generation',
      ),
    ensureBootstrapAdmin: (userId, hash, prefix, keepLive) => ensureBootstrapAdmin(sql, userId, hash, prefix, keepLive),
  };
}
