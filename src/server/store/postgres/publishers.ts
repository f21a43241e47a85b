// Publishers, their members and invitations on PostgreSQL. The publisher's row is the lock every
// change of its members takes: owners are counted under it, and an accept cannot slip in between.
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { PUBLISHER_WRITABLE_FIELDS } from '../../../contract/resources.js';
import { INVITATION_SELECT, MEMBER_SELECT } from '../member-row.js';
import type { InviteOutcome, MemberRole, PublisherFields, RegistryStore } from '../registry-store.js';
import { count, decodeInvitation, decodeMember, decodePublisher, decodeRole, first, only, text } from '../rows.js';
import { now, setList, type Sql } from './columns.js';

const PUBLISHER_COLUMNS = [...PUBLISHER_WRITABLE_FIELDS, 'status'];
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

const getPublisher = async (db: Sql, id: string) =>
  first(await db`SELECT * FROM publishers WHERE id = ${id}`, decodePublisher);

const getRole = async (db: Sql, publisherId: string, userId: string): Promise<MemberRole | undefined> =>
  first(await db`SELECT role FROM members WHERE publisher_id = ${publisherId} AND user_id = ${userId}`, decodeRole);

const ownerCount = async (db: Sql, publisherId: string) =>
  only(
    await db`SELECT count(*)::int AS n FROM members WHERE publisher_id = ${publisherId} AND role = 'owner'`,
    (row) => count(row, 'n'),
    'owners',
  );

const lockPublisher = (tx: Sql, publisherId: string) =>
  tx`SELECT 1 FROM publishers WHERE id = ${publisherId} FOR UPDATE`;

/** A member this transaction has just written. */
const writtenMember = async (db: Sql, publisherId: string, userId: string) =>
  only(
    await db.unsafe(`${MEMBER_SELECT} WHERE m.publisher_id = $1 AND m.user_id = $2`, [publisherId, userId]),
    decodeMember,
    `member ${userId}`,
  );

function createPublisher(sql: postgres.Sql, id: string, fields: Partial<PublisherFields>, ownerId: string) {
  return sql.begin(async (tx) => {
    const set = setList(tx, fields, PUBLISHER_COLUMNS, NO_JSON) ?? {};
    const [created] =
      await tx`INSERT INTO publishers ${tx({ ...set, id, created_at: now() })} ON CONFLICT (id) DO NOTHING RETURNING id`;
    if (!created) return 'exists' as const;
    await tx`INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (${randomUUID()}, ${id}, ${ownerId}, 'owner', ${now()})`;
    return only(await tx`SELECT * FROM publishers WHERE id = ${id}`, decodePublisher, `publisher ${id}`);
  });
}

async function updatePublisher(sql: postgres.Sql, id: string, changes: Partial<PublisherFields>) {
  const set = setList(sql, changes, PUBLISHER_COLUMNS, NO_JSON);
  if (set) await sql`UPDATE publishers SET ${sql(set)} WHERE id = ${id}`;
  return only(await sql`SELECT * FROM publishers WHERE id = ${id}`, decodePublisher, `publisher ${id}`);
}

/** A member's new role, in a transaction that holds the publisher's lock. */
async function changeRole(
  tx: Sql,
  publisherId: string,
  userId: string,
  role: MemberRole,
  current: MemberRole | undefined,
) {
  if (current === 'owner' && role !== 'owner' && (await ownerCount(tx, publisherId)) === 1)
    return 'last-owner' as const;
  if (current) await tx`UPDATE members SET role = ${role} WHERE publisher_id = ${publisherId} AND user_id = ${userId}`;
  else
    await tx`INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (${randomUUID()}, ${publisherId}, ${userId}, ${role}, ${now()})`;
  return writtenMember(tx, publisherId, userId);
}

function setMember(sql: postgres.Sql, publisherId: string, userId: string, role: MemberRole) {
  return sql.begin(async (tx) => {
    await lockPublisher(tx, publisherId);
    return changeRole(tx, publisherId, userId, role, await getRole(tx, publisherId, userId));
  });
}

function removeMember(sql: postgres.Sql, publisherId: string, userId: string) {
  return sql.begin(async (tx) => {
    await lockPublisher(tx, publisherId);
    const current = await getRole(tx, publisherId, userId);
    if (!current) return 'not-member' as const;
    if (current === 'owner' && (await ownerCount(tx, publisherId)) === 1) return 'last-owner' as const;
    await tx`DELETE FROM members WHERE publisher_id = ${publisherId} AND user_id = ${userId}`;
    await tx`UPDATE tokens SET revoked_at = ${now()} WHERE kind = 'pat' AND publisher_id = ${publisherId} AND user_id = ${userId} AND revoked_at IS NULL`;
    return 'removed' as const;
  });
}

function invite(sql: postgres.Sql, input: Parameters<RegistryStore['invite']>[0]): Promise<InviteOutcome> {
  return sql.begin(async (tx): Promise<InviteOutcome> => {
    await lockPublisher(tx, input.publisherId);
    const current = await getRole(tx, input.publisherId, input.userId);
    if (current) {
      const member = await changeRole(tx, input.publisherId, input.userId, input.role, current);
      return member === 'last-owner' ? member : { kind: 'member', member };
    }
    await tx`INSERT INTO invitations (publisher_id, user_id, role, invited_by, created_at)
             VALUES (${input.publisherId}, ${input.userId}, ${input.role}, ${input.invitedBy}, ${now()})
             ON CONFLICT (publisher_id, user_id) DO UPDATE SET role = excluded.role, invited_by = excluded.invited_by`;
    const rows = await tx.unsafe(`${INVITATION_SELECT} WHERE i.publisher_id = $1 AND i.user_id = $2`, [
      input.publisherId,
      input.userId,
    ]);
    return { kind: 'invited', invitation: only(rows, decodeInvitation, `invitation of ${input.userId}`) };
  });
}

function acceptInvitation(sql: postgres.Sql, publisherId: string, userId: string) {
  return sql.begin(async (tx) => {
    await lockPublisher(tx, publisherId);
    const role = first(
      await tx`DELETE FROM invitations WHERE publisher_id = ${publisherId} AND user_id = ${userId} RETURNING role`,
      decodeRole,
    );
    if (!role) return undefined;
    await tx`INSERT INTO members (id, publisher_id, user_id, role, created_at) VALUES (${randomUUID()}, ${publisherId}, ${userId}, ${role}, ${now()})
             ON CONFLICT (publisher_id, user_id) DO NOTHING`;
    return writtenMember(tx, publisherId, userId);
  });
}

async function listInvitations(sql: postgres.Sql, filter: { userId: string } | { publisherId: string }) {
  const rows =
    'userId' in filter
      ? await sql.unsafe(`${INVITATION_SELECT} WHERE i.user_id = $1 ORDER BY i.created_at, i.publisher_id`, [
          filter.userId,
        ])
      : await sql.unsafe(`${INVITATION_SELECT} WHERE i.publisher_id = $1 ORDER BY i.created_at, i.user_id`, [
          filter.publisherId,
        ]);
  return rows.map(decodeInvitation);
}

export function postgresPublisherStore(sql: postgres.Sql): PublisherStore {
  return {
    getPublisher: (id) => getPublisher(sql, id),
    createPublisher: (id, fields, ownerId) => createPublisher(sql, id, fields, ownerId),
    updatePublisher: (id, changes) => updatePublisher(sql, id, changes),
    listMembers: async (publisherId) =>
      (await sql.unsafe(`${MEMBER_SELECT} WHERE m.publisher_id = $1 ORDER BY m.created_at, m.id`, [publisherId])).map(
        decodeMember,
      ),
    getRole: (publisherId, userId) => getRole(sql, publisherId, userId),
    publishersOfUser: async (userId) =>
      (await sql`SELECT publisher_id, role FROM members WHERE user_id = ${userId} ORDER BY publisher_id`).map(
        (row) => ({ id: text(row, 'publisher_id'), role: decodeRole(row) }),
      ),
    setMember: (publisherId, userId, role) => setMember(sql, publisherId, userId, role),
    removeMember: (publisherId, userId) => removeMember(sql, publisherId, userId),
    invite: (input) => invite(sql, input),
    listInvitations: (filter) => listInvitations(sql, filter),
    acceptInvitation: (publisherId, userId) => acceptInvitation(sql, publisherId, userId),
    removeInvitation: async (publisherId, userId) =>
      (await sql`DELETE FROM invitations WHERE publisher_id = ${publisherId} AND user_id = ${userId} RETURNING user_id`)
        .length === 1,
  };
}
