// Invitations by e-mail address (issue 36): an owner who invites an address learns nothing about
// whether an account has it. The invitation is kept against the address (migration
// 'address-invitations') and becomes the user's invitation when a user with that address is created,
// signs in on the web pages, or reads their invitations (services/accounts.ts claimAddress).
import type { MemberRole } from './registry-store.js';

export interface AddressInvitationStore {
  /** Invites `email` (compared in lower case); inviting it again takes the new role. */
  inviteAddress(input: { publisherId: string; email: string; role: MemberRole; invitedBy: string }): Promise<void>;
  /**
   * Turns every invitation of `email` into an invitation of user `userId` (not to a publisher they
   * are a member of, nor one that invited them already), and forgets them; how many were the user's.
   */
  claimAddressInvitations(userId: string, email: string): Promise<number>;
  /** Withdraws the invitation of `email` to the publisher; false when there was none. */
  removeAddressInvitation(publisherId: string, email: string): Promise<boolean>;
}

export const ADDRESS_INVITATIONS_SCHEMA = `
CREATE TABLE IF NOT EXISTS address_invitations (
  publisher_id  TEXT NOT NULL REFERENCES publishers(id),
  email         TEXT NOT NULL,
  role          TEXT NOT NULL CHECK (role IN ('owner', 'member')),
  invited_by    TEXT REFERENCES users(id),
  created_at    TEXT NOT NULL,
  PRIMARY KEY (publisher_id, email)
);
CREATE INDEX IF NOT EXISTS address_invitations_by_email ON address_invitations(email);
`;

/** The statements, with `$1`… as PostgreSQL numbers them; SQLite binds them by position (forSqlite). */
export const ADDRESS_INVITATION_ROWS = {
  invite: `INSERT INTO address_invitations (publisher_id, email, role, invited_by, created_at) VALUES ($1, lower(CAST($2 AS TEXT)), $3, $4, $5)
    ON CONFLICT (publisher_id, email) DO UPDATE SET role = excluded.role, invited_by = excluded.invited_by`,
  /** Parameters: the user id, the e-mail, the user id again (SQLite binds by position). */
  claim: `INSERT INTO invitations (publisher_id, user_id, role, invited_by, created_at)
    SELECT a.publisher_id, CAST($1 AS TEXT), a.role, a.invited_by, a.created_at FROM address_invitations a
    WHERE a.email = lower(CAST($2 AS TEXT)) AND NOT EXISTS (SELECT 1 FROM members m WHERE m.publisher_id = a.publisher_id AND m.user_id = CAST($3 AS TEXT))
    ON CONFLICT (publisher_id, user_id) DO NOTHING`,
  forget: 'DELETE FROM address_invitations WHERE email = lower(CAST($1 AS TEXT))',
  remove: 'DELETE FROM address_invitations WHERE publisher_id = $1 AND email = lower(CAST($2 AS TEXT))',
} as const;
