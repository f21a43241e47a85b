import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createOnce } from '../data-dir.js';
import { forbidden } from '../errors.js';
import { StartRefusedError } from '../start-refusal.js';
import type { Authenticate, Principal } from '../route.js';
import { TOKEN_USE_GRANULARITY_MS, type RegistryStore } from '../store/registry-store.js';
import { generateToken, hashToken, shownPrefix } from './tokens.js';

/** The id of the admin user the bootstrap token belongs to. */
export const ADMIN_USER_ID = 'admin';

/**
 * The admin's token for this start: the one given (NODEREG_ADMIN_TOKEN), else the one in
 * DIR/admin-token, else a new one written there (0600). `generated` says it is new, to print once.
 */
export function resolveAdminToken(
  dataDir: string | undefined,
  given: string | undefined,
): { token: string; generated: boolean; given: boolean } {
  if (given) return { token: given, generated: false, given: true };
  if (dataDir === undefined) throw new Error('without a data dir the admin token must be given (NODEREG_ADMIN_TOKEN)');
  const file = join(dataDir, 'admin-token');
  if (existsSync(file)) {
    const saved = readFileSync(file, 'utf8').trim();
    if (saved) return { token: saved, generated: false, given: false };
    rmSync(file); // empty: a first start cut short
  }
  const token = generateToken('user');
  // another serve starting on the same new dir may have linked its own first: both take that one
  const kept = createOnce(file, `${token}\n`);
  return { token: kept, generated: kept === token, given: false };
}

/**
 * Makes `token` the live token of the admin user (the previous bootstrap token stops working), and
 * resolves to true. On a database other instances share, a token not given (generated, or read from
 * DIR/admin-token) leaves a live one in place instead: each instance with a data dir of its own would
 * otherwise revoke the others' at every start. Then a generated token's file is removed, the
 * operator is told where the live one is, and it resolves to false.
 */
export async function bootstrapAdmin(
  store: RegistryStore,
  admin: { token: string; generated: boolean; given: boolean },
  dataDir: string | undefined,
  { shared, rotate = false }: { shared: boolean; rotate?: boolean },
  log: ((line: string) => void) | undefined,
): Promise<boolean> {
  // A given token on a shared database replaces the fleet's only when told to: one instance started with
  // another NODEREG_ADMIN_TOKEN would otherwise revoke the token every other instance's admin uses.
  const keepLive = shared && (!admin.given || !rotate);
  if (await store.ensureBootstrapAdmin(ADMIN_USER_ID, hashToken(admin.token), shownPrefix(admin.token), keepLive))
    return true;
  if (admin.given) {
    throw new StartRefusedError(
      `NODEREG_ADMIN_TOKEN (${shownPrefix(admin.token)}…) is not the admin token the shared database holds: starting with it would revoke the token every other instance's admin uses`,
      'admin_token_differs',
      "give this instance the fleet's NODEREG_ADMIN_TOKEN (the same on every instance); or, to replace it on every instance, start this one once with --rotate-admin-token and then give the new token to the others",
      'invalid',
    );
  }
  const file = join(dataDir!, 'admin-token');
  if (admin.generated) rmSync(file, { force: true });
  // The file stays: it may still be the live token of the dir's own registry.db, which --database leaves behind.
  const here = admin.generated
    ? 'none generated here'
    : `${file} holds another one, dead here (delete it, unless the data dir's own registry.db is still served with it)`;
  log?.(
    `admin token: kept the one the shared database has (in the admin-token file of the instance that generated it, or set with NODEREG_ADMIN_TOKEN); ${here}. To choose it, set NODEREG_ADMIN_TOKEN, the same on every instance`,
  );
  return false;
}

/** The 403 of a token whose user an admin disabled. */
export const accountDisabled = (user: { id: string; name: string }) =>
  forbidden(
    `the account ${user.name} (${user.id}) is disabled: its tokens are refused`,
    `ask an admin of this registry to enable it (\`nodereg user enable ${user.id}\`)`,
  );

/** Principals kept at most: the least recently found go first. */
const MAX_PRINCIPALS = 10_000;

/**
 * Resolves tokens through the store, keeping each principal by the token's hash while the store's
 * tokens generation stays where it was when the token was found: a revocation (on any instance)
 * moves it, so the next request goes back to the store and is refused. A principal is kept for a
 * minute at most, so that `last_used_at` is still recorded to the minute. A disabled user's token is
 * 403 (disabling moves the generation too).
 */
export function createAuthenticate(store: RegistryStore): Authenticate {
  const principals = new Map<string, { generation: number; principal: Principal; foundAt: number }>();
  return async (token) => {
    const hash = hashToken(token);
    const generation = await store.tokenGeneration(); // read first: a revocation after it moves it
    const kept = principals.get(hash);
    if (kept && kept.generation === generation && Date.now() - kept.foundAt < TOKEN_USE_GRANULARITY_MS)
      return kept.principal;
    principals.delete(hash);
    const found = await store.useToken(hash);
    if (!found) return null;
    const { token: row, user } = found;
    // Never kept: each request of a disabled account asks the store again, so enabling it works at once.
    if (user.disabled_at) throw accountDisabled(user);
    const principal: Principal =
      row.kind === 'pat'
        ? { kind: 'pat', userId: user.id, admin: false, tokenId: row.id, publisherId: row.publisher_id! }
        : { kind: 'user', userId: user.id, admin: user.admin, tokenId: row.id };
    principals.set(hash, { generation, principal, foundAt: Date.now() });
    if (principals.size > MAX_PRINCIPALS) principals.delete(principals.keys().next().value!);
    return principal;
  };
}
