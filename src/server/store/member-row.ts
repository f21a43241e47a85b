import type { InvitationRow, MemberRole, MemberRow } from './registry-store.js';

/** Members are read joined with their users, in the same columns by every store. */
export const MEMBER_SELECT = `SELECT m.id, m.publisher_id, m.role, m.created_at, u.id AS user_id, u.name AS user_name, u.email AS user_email
    FROM members m JOIN users u ON u.id = m.user_id`;

export const toMember = (row: Record<string, unknown>): MemberRow => ({
  id: row.id as string,
  publisher_id: row.publisher_id as string,
  role: row.role as MemberRole,
  created_at: row.created_at as string,
  user: { id: row.user_id as string, name: row.user_name as string, email: row.user_email as string | null },
});

/** Invitations joined with their publisher, user and inviter, in the same columns by every store. */
export const INVITATION_SELECT = `SELECT i.publisher_id, p.name AS publisher_name, i.user_id, u.name AS user_name, i.role,
      i.invited_by, b.name AS invited_by_name, i.created_at
    FROM invitations i JOIN publishers p ON p.id = i.publisher_id JOIN users u ON u.id = i.user_id LEFT JOIN users b ON b.id = i.invited_by`;

export const toInvitation = (row: Record<string, unknown>): InvitationRow => ({
  publisher: { id: row.publisher_id as string, name: row.publisher_name as string | null },
  user: { id: row.user_id as string, name: row.user_name as string },
  role: row.role as MemberRole,
  invited_by: row.invited_by ? { id: row.invited_by as string, name: row.invited_by_name as string } : null,
  created_at: row.created_at as string,
});

/** The schema both stores add for invitations (migration 'invitations'); the SQL is the same on both. */
export const INVITATIONS_SCHEMA = `
CREATE TABLE invitations (
  publisher_id  TEXT NOT NULL REFERENCES publishers(id),
  user_id       TEXT NOT NULL REFERENCES users(id),
  role          TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  invited_by    TEXT REFERENCES users(id),
  created_at    TEXT NOT NULL,
  PRIMARY KEY (publisher_id, user_id)
);
CREATE INDEX invitations_by_user ON invitations(user_id);
-- owners name users by e-mail or name
CREATE INDEX users_by_email ON users(lower(email));
CREATE INDEX users_by_name ON users(name);
`;
