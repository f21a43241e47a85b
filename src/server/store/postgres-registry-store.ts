// The RegistryStore on PostgreSQL, for several server instances sharing one database: a store per
// aggregate (users and tokens, publishers, nodes, versions, reviews), each a module of named functions
// in store/postgres/, composed here. Loaded only when a postgres:// URL is given.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { createPostgresTaskStore } from '../proxy/postgres-task-store.js';
import type { TaskStore } from '../proxy/store.js';
import { DEFAULT_PG_POOL } from '../../shared/tuning.js';
import { DATABASE_DEADLINE_MS, watchedSockets, withDeadline } from './postgres-deadline.js';
import { postgresApprovalStore } from './postgres/approvals.js';
import { postgresArchiveGcStore } from './postgres/archive-gc.js';
import { postgresAddressInvitationStore } from './postgres/address-invitations.js';
import { heardChanges } from './postgres/changes.js';
import { postgresWebhookStore } from './webhooks.js';
import { postgresIdentityStore } from './postgres/identity.js';
import { migratePostgres } from './postgres/migrate.js';
import { postgresNodeClassStore } from './postgres/node-classes.js';
import { postgresNodeStore } from './postgres/nodes.js';
import { postgresPublisherStore } from './postgres/publishers.js';
import { postgresRateWindows } from './postgres/rate-windows.js';
import { postgresReviewStore } from './postgres/reviews.js';
import { postgresUserStore } from './postgres/tokens.js';
import { postgresVersionStore } from './postgres/versions.js';
import { postgresTrustStore } from './postgres/trusts.js';
import type { RegistryStore } from './registry-store.js';
import { postgresAuditStore } from './postgres/audit.js';
import { postgresUserLifecycleStore } from './postgres/user-lifecycle.js';
import { postgresWebStore } from './web.js';
import { only, text } from './rows.js';

export { migratePostgres };

/**
 * Connects, migrates, and reads the server's secret (32 random bytes, created by the first instance
 * under the database's own rule: one row, inserted once).
 */
export async function connectPostgres(
  url: string,
  log?: (line: string) => void,
  pool = DEFAULT_PG_POOL,
): Promise<{ store: RegistryStore; tasks: TaskStore; secret: Buffer; close(): Promise<void> }> {
  const sockets = watchedSockets();
  // `socket` is documented in postgres.js's README ("Custom socket") but missing from its types. The
  // reconnect backoff is at most 1 s (postgres.js's grows to 20 s): the connections closed past the
  // deadline would keep a database that is back unused for that long.
  const options = {
    max: pool,
    onnotice: () => {},
    socket: sockets.socket,
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
  };
  const sql = postgres(url, options as postgres.Options<{}>);
  let changes: Awaited<ReturnType<typeof heardChanges>> | undefined;
  try {
    // The migrations have no deadline: instances starting together wait for each other's.
    await migratePostgres(sql, log);
    await sql`INSERT INTO server_secret (id, secret) VALUES (1, ${randomBytes(32).toString('hex')}) ON CONFLICT (id) DO NOTHING`;
    const secret = only(
      await sql`SELECT secret FROM server_secret WHERE id = 1`,
      (row) => text(row, 'secret'),
      'the server secret',
    );
    const bounded = <T extends object>(target: T) =>
      withDeadline(target, DATABASE_DEADLINE_MS, () => sockets.closeSilent(DATABASE_DEADLINE_MS));
    const store = createPostgresRegistryStore(sql);
    changes = await heardChanges(url, store, { backoff: options.backoff });
    const { getNodeState, tokenGeneration, review } = changes;
    const heard = changes;
    return {
      store: bounded({ ...store, getNodeState, tokenGeneration, review }),
      tasks: bounded(createPostgresTaskStore(sql)),
      secret: Buffer.from(secret, 'hex'),
      // Bounded too: a stopped server never answers the goodbye.
      close: async () => {
        await heard.close();
        await sql.end({ timeout: DATABASE_DEADLINE_MS / 1000 });
      },
    };
  } catch (error) {
    await changes?.close();
    await sql.end({ timeout: 1 });
    throw error;
  }
}

export function createPostgresRegistryStore(sql: postgres.Sql): RegistryStore {
  return {
    async ping() {
      await sql`SELECT 1`;
    },
    ...postgresUserStore(sql),
    ...postgresPublisherStore(sql),
    ...postgresNodeStore(sql),
    ...postgresReviewStore(sql),
    ...postgresVersionStore(sql),
    ...postgresNodeClassStore(sql),
    ...postgresApprovalStore(sql),
    ...postgresIdentityStore(sql),
    ...postgresTrustStore(sql),
    ...postgresWebStore(sql),
    ...postgresRateWindows(sql),
    ...postgresArchiveGcStore(sql),
    ...postgresAddressInvitationStore(sql),
    ...postgresUserLifecycleStore(sql),
    ...postgresWebhookStore(sql),
    ...postgresAuditStore(sql),
  };
}
