// Accounts: users, their tokens, publishers, their access tokens, members and invitations.
import { tooManyTokens } from '../../contract/errors.js';
import { TOKENS_MAX } from '../../contract/limits.js';
import { PUBLISHER_WRITABLE_FIELDS, type PublisherInput } from '../../contract/resources.js';
import { adminOnlyField } from '../access.js';
import { generateToken, hashToken, shownPrefix, type TokenKind } from '../accounts/tokens.js';
import { conflict, HttpError, notFound } from '../errors.js';
import type { PublisherFields, PublisherRow, RegistryStore, UserRow } from '../store/registry-store.js';

/** The changes a publisher body asks for; `status` is an admin's. */
export function publisherChanges(
  input: PublisherInput,
  current: PublisherRow | undefined,
  admin: boolean,
): Partial<PublisherFields> {
  const changes: Record<string, unknown> = {};
  for (const field of PUBLISHER_WRITABLE_FIELDS) if (input[field] !== undefined) changes[field] = input[field];
  if (adminOnlyField(admin, 'status', current?.status ?? 'PublisherStatusActive', input.status))
    changes.status = input.status;
  return changes as Partial<PublisherFields>;
}

/** Creates a token and answers it the one time it is shown. */
export async function issueToken(
  store: RegistryStore,
  input: { kind: TokenKind; userId: string; publisherId?: string; name: string },
): Promise<{ id: string; name: string; created_at: string; prefix: string; token: string }> {
  const owner = input.kind === 'pat' ? { publisherId: input.publisherId! } : { userId: input.userId };
  if ((await store.listTokens(owner)).length >= TOKENS_MAX) {
    const refused = tooManyTokens(input.kind === 'pat' ? input.publisherId : undefined);
    throw new HttpError(refused.code, refused.message, undefined, refused.hint);
  }
  const token = generateToken(input.kind);
  const row = await store.createToken({ ...input, hash: hashToken(token), prefix: shownPrefix(token) });
  return { id: row.id, name: row.name, created_at: row.created_at, prefix: row.prefix, token };
}

/**
 * Makes the invitations kept against the user's e-mail address theirs (store/address-invitations.ts):
 * called where a user appears or looks for invitations (created, signed in on the web pages, reading or
 * accepting their invitations).
 */
export async function claimAddress(store: RegistryStore, user: Pick<UserRow, 'id' | 'email'> | undefined) {
  if (user?.email) await store.claimAddressInvitations(user.id, user.email);
}

/** Creates a user with its first token; answers the token the one time it is shown. */
export async function createUserWithToken(
  store: RegistryStore,
  input: { name: string; email?: string; admin?: boolean },
) {
  const token = generateToken('user');
  const user = await store.createUser({
    name: input.name,
    email: input.email ?? null,
    admin: input.admin ?? false,
    token: { name: 'token', hash: hashToken(token), prefix: shownPrefix(token) },
  });
  await claimAddress(store, user);
  return { user, token };
}

/** The one user an owner names by id, e-mail or user name: 404 for none, 409 when a name is shared. */
export async function invitee(store: RegistryStore, text: string): Promise<UserRow> {
  const found = await store.findUsers(text);
  if (found.length === 0) throw notFound(`no user has the id, e-mail or name "${text}"`);
  if (found.length > 1)
    throw conflict(`${found.length} users answer to "${text}"`, 'name the user by their id or e-mail');
  return found[0];
}

/**
 * The member or invitee of a publisher an owner names by id, e-mail or user name (as `invitee`):
 * among the users answering to `text`, the one who belongs to the publisher or is invited to it.
 * Undefined when none does; 409 when a name is shared by two who do.
 */
export async function memberNamed(
  store: RegistryStore,
  publisherId: string,
  text: string,
): Promise<string | undefined> {
  const found = await store.findUsers(text);
  if (found.length === 0) return undefined;
  const [members, invited] = await Promise.all([
    store.listMembers(publisherId),
    store.listInvitations({ publisherId }),
  ]);
  const belonging = new Set([...members.map((m) => m.user.id), ...invited.map((i) => i.user.id)]);
  const ours = found.filter((user) => belonging.has(user.id));
  if (ours.length > 1)
    throw conflict(`${ours.length} members answer to "${text}"`, 'name the user by their id or e-mail');
  return ours[0]?.id;
}
