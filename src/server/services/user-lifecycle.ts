// Users after their creation (the [operate] issue): an admin lists, disables, enables and deletes them,
// and lists and revokes any user's tokens. The store applies each change in one transaction
// (store/user-lifecycle.ts); this names the refusals.
import type { User } from '../../contract/resources.js';
import { badRequest, conflict, forbidden, notFound } from '../errors.js';
import type { Principal } from '../route.js';
import type { RegistryStore, TokenRow, UserRow } from '../store/registry-store.js';
import type { MembershipFate } from '../store/user-lifecycle.js';
import { invitee } from './accounts.js';

export const userView = (user: UserRow): User => ({
  id: user.id,
  name: user.name,
  ...(user.email ? { email: user.email } : {}),
  admin: user.admin,
  ...(user.disabled_at ? { disabled: true } : {}),
});
/** A user in an admin's list: when they were created too. */
export const listedUserView = (user: UserRow): User => ({ ...userView(user), created_at: user.created_at });

/** A token as lists show it (never its hash). */
export const tokenInfo = (token: TokenRow) => ({
  id: token.id,
  name: token.name,
  created_at: token.created_at,
  last_used_at: token.last_used_at,
  prefix: token.prefix,
});
/** A token in an admin's list of a user's tokens: which kind, and for which publisher. */
export const ownedTokenInfo = (token: TokenRow) => ({
  ...tokenInfo(token),
  kind: token.kind,
  publisher_id: token.publisher_id,
});

export function requireAdmin(principal: Principal | null, what: string): void {
  if (!principal?.admin)
    throw forbidden(`only an admin may ${what}`, "`nodereg whoami` shows whether your token is an admin's");
}

const lastAdmin = (user: UserRow) =>
  conflict(
    `user ${user.name} (${user.id}) is the last enabled admin of this registry`,
    'make another admin first (nodereg user create <name> --admin)',
  );

/** Disables or enables the user named by id, e-mail or name. */
export async function setDisabled(store: RegistryStore, named: string, disabled: boolean, by: string): Promise<User> {
  const user = await invitee(store, named);
  const outcome = await store.setUserDisabled(user.id, disabled, by);
  if (outcome === 'not-found') throw notFound(`no user has the id, e-mail or name "${named}"`);
  if (outcome === 'last-admin') throw lastAdmin(user);
  return userView(outcome);
}

/** What becomes of the memberships of `user`: the query's choice, or, when they have none, nothing to choose. */
async function membershipFate(
  store: RegistryStore,
  user: UserRow,
  query: { transfer_to?: string; remove_memberships?: 'true' | 'false' },
): Promise<MembershipFate> {
  const remove = query.remove_memberships === 'true';
  if (query.transfer_to !== undefined && remove)
    throw badRequest('give transfer_to or remove_memberships=true, not both');
  if (query.transfer_to !== undefined) {
    const heir = await invitee(store, query.transfer_to);
    if (heir.id === user.id) throw badRequest(`transfer_to names the user being deleted (${user.id})`);
    return { transferTo: heir.id };
  }
  if (remove) return 'remove';
  const publishers = await store.publishersOfUser(user.id);
  if (publishers.length)
    throw conflict(
      `user ${user.name} (${user.id}) is a member of ${publishers.map((p) => p.id).join(', ')}: say what becomes of the memberships`,
      'name who takes them over with transfer_to (`--transfer-to <user>`), or drop them with remove_memberships=true (`--remove-memberships`)',
    );
  return 'remove';
}

/** Deletes the user named by id, e-mail or name (store deleteUser); 409 for the last admin and for a sole owner whose memberships would just go. */
export async function deleteNamedUser(
  store: RegistryStore,
  named: string,
  query: { transfer_to?: string; remove_memberships?: 'true' | 'false' },
  by: string,
): Promise<UserRow> {
  const user = await invitee(store, named);
  const outcome = await store.deleteUser(user.id, await membershipFate(store, user, query), by);
  if (outcome === 'not-found') throw notFound(`no user has the id, e-mail or name "${named}"`);
  if (outcome === 'last-admin') throw lastAdmin(user);
  if (outcome.kind === 'sole-owner')
    throw conflict(
      `user ${user.name} (${user.id}) is the only owner of ${outcome.publishers.join(', ')}: removing the memberships would leave no owner`,
      'transfer them instead with transfer_to (`--transfer-to <user>`), or make another member an owner first',
    );
  return outcome.user;
}

/** Revokes one of the named user's tokens (a user token or an access token they made). */
export async function revokeTokenOf(store: RegistryStore, named: string, tokenId: string, by: string): Promise<void> {
  const user = await invitee(store, named);
  const token = await store.getToken(tokenId);
  if (!token || token.user_id !== user.id || token.revoked_at)
    throw notFound(`token ${tokenId} is not a live token of user ${user.name} (${user.id})`);
  await store.revokeToken(token.id);
  await store.audit({
    actorId: by,
    action: 'token.revoke',
    target: `token:${token.id}`,
    details: { user: user.id, kind: token.kind, name: token.name, publisher: token.publisher_id },
  });
}
