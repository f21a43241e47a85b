import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Authenticate } from '../route.js';
import type { RegistryStore } from '../store/registry-store.js';
import { generateToken, hashToken, shownPrefix } from './tokens.js';

/** The id of the admin user the bootstrap token belongs to. */
export const ADMIN_USER_ID = 'admin';

/**
 * The admin's token for this start: the one given (NODEREG_ADMIN_TOKEN), else the one in
 * DIR/admin-token, else a new one written there (0600). `generated` says it is new, to print once.
 */
export function resolveAdminToken(dataDir: string | undefined, given: string | undefined): { token: string; generated: boolean } {
  if (given) return { token: given, generated: false };
  if (dataDir === undefined) throw new Error('without a data dir the admin token must be given (NODEREG_ADMIN_TOKEN)');
  const file = join(dataDir, 'admin-token');
  if (existsSync(file)) {
    const saved = readFileSync(file, 'utf8').trim();
    if (saved) return { token: saved, generated: false };
  }
  const token = generateToken('user');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return { token, generated: true };
}

/** Makes `token` the live token of the admin user (the previous bootstrap token stops working). */
export function bootstrapAdmin(store: RegistryStore, token: string): Promise<void> {
  return store.ensureBootstrapAdmin(ADMIN_USER_ID, hashToken(token), shownPrefix(token));
}

/** Resolves a bearer token through the store; records its use. */
export function createAuthenticate(store: RegistryStore): Authenticate {
  return async (token) => {
    const found = await store.useToken(hashToken(token));
    if (!found) return null;
    const { token: row, user } = found;
    if (row.kind === 'pat') return { kind: 'pat', userId: user.id, admin: false, tokenId: row.id, publisherId: row.publisher_id! };
    return { kind: 'user', userId: user.id, admin: user.admin, tokenId: row.id };
  };
}
