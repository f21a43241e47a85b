// Invitations by e-mail address on SQLite (store/address-invitations.ts).
import { ADDRESS_INVITATION_ROWS as ROWS, type AddressInvitationStore } from '../address-invitations.js';
import { forSqlite } from '../node-classes.js';
import { now, type SqliteAccess } from './access.js';

export function sqliteAddressInvitationStore(access: SqliteAccess): AddressInvitationStore {
  const run = (sql: string, ...params: unknown[]) => access.prepare(forSqlite(sql)).run(...params).changes;
  const claim = access.writing((userId: string, email: string) => {
    const claimed = run(ROWS.claim, userId, email, userId);
    run(ROWS.forget, email);
    return claimed;
  });
  return {
    async inviteAddress({ publisherId, email, role, invitedBy }) {
      run(ROWS.invite, publisherId, email, role, invitedBy, now());
    },
    claimAddressInvitations: async (userId, email) => claim(userId, email),
    removeAddressInvitation: async (publisherId, email) => run(ROWS.remove, publisherId, email) > 0,
  };
}
