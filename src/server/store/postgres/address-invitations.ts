// Invitations by e-mail address on PostgreSQL (store/address-invitations.ts).
import type postgres from 'postgres';
import { ADDRESS_INVITATION_ROWS as ROWS, type AddressInvitationStore } from '../address-invitations.js';
import { now } from './columns.js';

export function postgresAddressInvitationStore(sql: postgres.Sql): AddressInvitationStore {
  return {
    async inviteAddress({ publisherId, email, role, invitedBy }) {
      await sql.unsafe(ROWS.invite, [publisherId, email, role, invitedBy, now()]);
    },
    claimAddressInvitations: (userId, email) =>
      sql.begin(async (tx) => {
        const claimed = await tx.unsafe(ROWS.claim, [userId, email, userId]);
        await tx.unsafe(ROWS.forget, [email]);
        return claimed.count;
      }),
    removeAddressInvitation: async (publisherId, email) =>
      (await sql.unsafe(ROWS.remove, [publisherId, email])).count > 0,
  };
}
