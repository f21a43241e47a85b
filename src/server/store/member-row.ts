/** Members are read joined with their users, in the same columns by every store (decodeMember, rows.ts). */
export const MEMBER_SELECT = `SELECT m.id, m.publisher_id, m.role, m.created_at, u.id AS user_id, u.name AS user_name, u.email AS user_email
    FROM members m JOIN users u ON u.id = m.user_id`;

/** Invitations joined with their publisher, user and inviter, in the same columns by every store (decodeInvitation). */
export const INVITATION_SELECT = `SELECT i.publisher_id, p.name AS publisher_name, i.user_id, u.name AS user_name, i.role,
      i.invited_by, b.name AS invited_by_name, i.created_at
    FROM invitations i JOIN publishers p ON p.id = i.publisher_id JOIN users u ON u.id = i.user_id LEFT JOIN users b ON b.id = i.invited_by`;

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
