// Publishers, their members and invitations on SQLite. Every change of members runs in a write
// transaction, so owners are counted under the lock.
import { randomUUID } from 'node:crypto';
import { PUBLISHER_WRITABLE_FIELDS } from '../../../contract/resources.js';
import { INVITATION_SELECT, MEMBER_SELECT } from '../member-row.js';
import type {
  InviteOutcome,
  MemberRole,
  MemberRow,
  PublisherFields,
  PublisherRow,
  RegistryStore,
} from '../registry-store.js';
import { count, decodeInvitation, decodeMember, decodePublisher, decodeRole, first, only, text } from '../rows.js';
import { assignments, now, type SqliteAccess } from './access.js';

const PUBLISHER_COLUMNS = [...PUBLISHER_WRITABLE_FIELDS, 'status'] as const;
const NO_JSON = new Set<string>();

type PublisherStore = Pick<
  RegistryStore,
  | 'getPublisher'
  | 'createPublisher'
  | 'updatePublisher'
  | 'listMembers'
  | 'getRole'
  | 'publishersOfUser'
  | 'setMember'
  | 'removeMember'
  | 'invite'
  | 'listInvitations'
  | 'acceptInvitation'
  | 'removeInvitation'
>;

const getPublisher = (access: SqliteAccess, id: string) =>
  first(access.all('SELECT * FROM publishers WHERE id = ?', id), decodePublisher);

const getRole = (access: SqliteAccess, publisherId: string, userId: string): MemberRole | undefined =>
  first(access.all('SELECT role FROM members WHERE publisher_id = ? AND user_id = ?', publisherId, userId), decodeRole);

const ownerCount = (access: SqliteAccess, publisherId: string) =>
  only(
    access.all("SELECT count(*) AS n FROM members WHERE publisher_id = ? AND role = 'owner'", publisherId),
    (row) => count(row, 'n'),
    'owners',
  );

/** A member this transaction has just written. */
const writtenMember = (access: SqliteAccess, publisherId: string, userId: string) =>
  only(
    access.all(`${MEMBER_SELECT} WHERE m.publisher_id = ? AND m.user_id = ?`, publisherId, userId),
    decodeMember,
    `member ${userId}`,
  );

function createPublisher(
  access: SqliteAccess,
  id: string,
  fields: Partial<PublisherFields>,
  ownerId: string,
): PublisherRow | 'exists' {
  if (getPublisher(access, id)) return 'exists';
  const set = assignments(fields, PUBLISHER_COLUMNS, NO_JSON);
  const columns = Object.keys(set.values);
  access
    .prepare(
      `INSERT INTO publishers (id, created_at${columns.map((c) => `, ${c}`).join('')}) VALUES (@id, @created_at${columns.map((c) => `, @${c}`).join('')})`,
    )
    .run({ ...set.values, id, created_at: now() });
  access
    .prepare("INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (?, ?, ?, 'owner', ?)")
    .run(randomUUID(), id, ownerId, now());
  return only(access.all('SELECT * FROM publishers WHERE id = ?', id), decodePublisher, `publisher ${id}`);
}

function updatePublisher(access: SqliteAccess, id: string, changes: Partial<PublisherFields>): PublisherRow {
  const set = assignments(changes, PUBLISHER_COLUMNS, NO_JSON);
  if (!set.empty) access.prepare(`UPDATE publishers SET ${set.sql} WHERE id = @id`).run({ ...set.values, id });
  return only(access.all('SELECT * FROM publishers WHERE id = ?', id), decodePublisher, `publisher ${id}`);
}

function setMember(
  access: SqliteAccess,
  publisherId: string,
  userId: string,
  role: MemberRole,
): MemberRow | 'last-owner' {
  const current = getRole(access, publisherId, userId);
  if (current === 'owner' && role !== 'owner' && ownerCount(access, publisherId) === 1) return 'last-owner';
  if (current)
    access.prepare('UPDATE members SET role = ? WHERE publisher_id = ? AND user_id = ?').run(role, publisherId, userId);
  else {
    access
      .prepare('INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(randomUUID(), publisherId, userId, role, now());
  }
  return writtenMember(access, publisherId, userId);
}

function removeMember(
  access: SqliteAccess,
  publisherId: string,
  userId: string,
): 'removed' | 'not-member' | 'last-owner' {
  const current = getRole(access, publisherId, userId);
  if (!current) return 'not-member';
  if (current === 'owner' && ownerCount(access, publisherId) === 1) return 'last-owner';
  access.prepare('DELETE FROM members WHERE publisher_id = ? AND user_id = ?').run(publisherId, userId);
  access
    .prepare(
      "UPDATE tokens SET revoked_at = ? WHERE kind = 'pat' AND publisher_id = ? AND user_id = ? AND revoked_at IS NULL",
    )
    .run(now(), publisherId, userId);
  return 'removed';
}

const getInvitation = (access: SqliteAccess, publisherId: string, userId: string) =>
  first(
    access.all(`${INVITATION_SELECT} WHERE i.publisher_id = ? AND i.user_id = ?`, publisherId, userId),
    decodeInvitation,
  );

function invite(access: SqliteAccess, input: Parameters<RegistryStore['invite']>[0]): InviteOutcome {
  if (getRole(access, input.publisherId, input.userId)) {
    const member = setMember(access, input.publisherId, input.userId, input.role);
    return member === 'last-owner' ? member : { kind: 'member', member };
  }
  access
    .prepare(
      `INSERT INTO invitations (publisher_id, user_id, role, invited_by, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (publisher_id, user_id) DO UPDATE SET role = excluded.role, invited_by = excluded.invited_by`,
    )
    .run(input.publisherId, input.userId, input.role, input.invitedBy, now());
  const invitation = getInvitation(access, input.publisherId, input.userId);
  if (!invitation) throw new Error(`the invitation of ${input.userId} to ${input.publisherId} was not written`);
  return { kind: 'invited', invitation };
}

function acceptInvitation(access: SqliteAccess, publisherId: string, userId: string): MemberRow | undefined {
  const invitation = getInvitation(access, publisherId, userId);
  if (!invitation) return undefined;
  access.prepare('DELETE FROM invitations WHERE publisher_id = ? AND user_id = ?').run(publisherId, userId);
  access
    .prepare(
      'INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (publisher_id, user_id) DO NOTHING',
    )
    .run(randomUUID(), publisherId, userId, invitation.role, now());
  return writtenMember(access, publisherId, userId);
}

function listInvitations(access: SqliteAccess, filter: { userId: string } | { publisherId: string }) {
  const rows =
    'userId' in filter
      ? access.all(`${INVITATION_SELECT} WHERE i.user_id = ? ORDER BY i.created_at, i.publisher_id`, filter.userId)
      : access.all(
          `${INVITATION_SELECT} WHERE i.publisher_id = ? ORDER BY i.created_at, i.user_id`,
          filter.publisherId,
        );
  return rows.map(decodeInvitation);
}

export function sqlitePublisherStore(access: SqliteAccess): PublisherStore {
  const { writing } = access;
  const creating = writing((id: string, fields: Partial<PublisherFields>, ownerId: string) =>
    createPublisher(access, id, fields, ownerId),
  );
  const settingMember = writing((publisherId: string, userId: string, role: MemberRole) =>
    setMember(access, publisherId, userId, role),
  );
  const removingMember = writing((publisherId: string, userId: string) => removeMember(access, publisherId, userId));
  const inviting = writing((input: Parameters<RegistryStore['invite']>[0]) => invite(access, input));
  const accepting = writing((publisherId: string, userId: string) => acceptInvitation(access, publisherId, userId));
  return {
    getPublisher: async (id) => getPublisher(access, id),
    createPublisher: async (id, fields, ownerId) => creating(id, fields, ownerId),
    updatePublisher: async (id, changes) => updatePublisher(access, id, changes),
    listMembers: async (publisherId) =>
      access
        .all(`${MEMBER_SELECT} WHERE m.publisher_id = ? ORDER BY m.created_at, m.id`, publisherId)
        .map(decodeMember),
    getRole: async (publisherId, userId) => getRole(access, publisherId, userId),
    publishersOfUser: async (userId) =>
      access
        .all('SELECT publisher_id, role FROM members WHERE user_id = ? ORDER BY publisher_id', userId)
        .map((row) => ({ id: text(row, 'publisher_id'), role: decodeRole(row) })),
    setMember: async (publisherId, userId, role) => settingMember(publisherId, userId, role),
    removeMember: async (publisherId, userId) => removingMember(publisherId, userId),
    invite: async (input) => inviting(input),
    listInvitations: async (filter) => listInvitations(access, filter),
    acceptInvitation: async (publisherId, userId) => accepting(publisherId, userId),
    removeInvitation: async (publisherId, userId) =>
      access.prepare('DELETE FROM invitations WHERE publisher_id = ? AND user_id = ?').run(publisherId, userId)
        .changes === 1,
  };
}
