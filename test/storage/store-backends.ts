// The stores a store-contract file runs its tests on: SQLite in a temp dir, and PostgreSQL on the run's
// cluster (test/postgres.ts: in CI a cluster that cannot start fails the file, it never skips it).
import { join } from 'node:path';
import postgres from 'postgres';
import { openDatabase } from '../../src/server/store/db.js';
import { createPostgresRegistryStore, migratePostgres } from '../../src/server/store/postgres-registry-store.js';
import type { RegistryStore } from '../../src/server/store/registry-store.js';
import { createSqliteRegistryStore } from '../../src/server/store/sqlite-registry-store.js';
import { tempDir } from '../helpers.js';
import { testPostgres } from '../postgres.js';

export interface StoreBackend {
  name: string;
  /** A fresh, migrated store, how to close it, and how to run a raw SQL statement on its database. */
  open(): Promise<{ store: RegistryStore; close(): unknown; execute(statement: string): Promise<unknown> }>;
}

export function storeBackends(): StoreBackend[] {
  const postgresServer = testPostgres();
  const backends: StoreBackend[] = [
    {
      name: 'sqlite',
      async open() {
        const db = openDatabase(join(tempDir('nodereg-store-'), 'registry.db'));
        const execute = async (statement: string) => db.exec(statement);
        return { store: createSqliteRegistryStore(db), close: () => db.close(), execute };
      },
    },
  ];
  if (postgresServer) {
    backends.push({
      name: 'postgresql',
      async open() {
        const sql = postgres(await (await postgresServer).migratedDatabase(), { max: 4, onnotice: () => {} });
        await migratePostgres(sql);
        const execute = (statement: string) => sql.unsafe(statement);
        return { store: createPostgresRegistryStore(sql), close: () => sql.end(), execute };
      },
    });
  }
  return backends;
}
