// The RegistryStore on SQLite, one process's: a store per aggregate (users and tokens, publishers,
// nodes, versions, reviews), each a module of named functions in store/sqlite/, composed here.
import { sqliteApprovalStore } from './sqlite/approvals.js';
import { sqliteArchiveGcStore } from './sqlite/archive-gc.js';
import { sqliteAddressInvitationStore } from './sqlite/address-invitations.js';
import { sqliteWebhookStore } from './webhooks.js';
import type { Db } from './db.js';
import { sqliteTrustStore } from './sqlite/trusts.js';
import type { RegistryStore } from './registry-store.js';
import { sqliteAuditStore } from './sqlite/audit.js';
import { sqliteUserLifecycleStore } from './sqlite/user-lifecycle.js';
import { sqliteWebStore } from './web.js';
import { sqliteAccess } from './sqlite/access.js';
import { sqliteIdentityStore } from './sqlite/identity.js';
import { sqliteNodeClassStore } from './sqlite/node-classes.js';
import { DEFAULT_RANK_LIMIT, sqliteNodeStore } from './sqlite/nodes.js';
import { sqlitePublisherStore } from './sqlite/publishers.js';
import { sqliteReviewStore } from './sqlite/reviews.js';
import { sqliteUserStore } from './sqlite/tokens.js';
import { sqliteVersionStore } from './sqlite/versions.js';

export { DEFAULT_RANK_LIMIT };

export interface SqliteStoreOptions {
  /** Searches with at most this many matches are ranked by bm25 over them all (see searchNodes). */
  rankLimit?: number;
}

export function createSqliteRegistryStore(
  db: Db,
  { rankLimit = DEFAULT_RANK_LIMIT }: SqliteStoreOptions = {},
): RegistryStore {
  const access = sqliteAccess(db);
  return {
    async ping() {
      access.one('SELECT 1');
    },
    ...sqliteUserStore(access),
    ...sqlitePublisherStore(access),
    ...sqliteNodeStore(access, rankLimit),
    ...sqliteReviewStore(access),
    ...sqliteVersionStore(access),
    ...sqliteNodeClassStore(access),
    ...sqliteApprovalStore(access),
    ...sqliteIdentityStore(access),
    ...sqliteTrustStore(access),
    ...sqliteWebStore(access),
    ...sqliteArchiveGcStore(access),
    ...sqliteAddressInvitationStore(access),
    ...sqliteUserLifecycleStore(access),
    ...sqliteWebhookStore(access),
    ...sqliteAuditStore(access),
  };
}
