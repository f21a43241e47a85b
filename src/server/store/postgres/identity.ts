// The registry's own id on PostgreSQL (RegistryStore.registryId): the first instance makes it.
import type postgres from 'postgres';
import type { RegistryStore } from '../registry-store.js';
import { only, text } from '../rows.js';
import { newRegistryId } from '../registry-id.js';

export function postgresIdentityStore(sql: postgres.Sql): Pick<RegistryStore, 'registryId'> {
  return {
    async registryId() {
      const [, rows] = await sql.begin((tx) => [
        tx`INSERT INTO registry_identity (id, registry_id) VALUES (1, ${newRegistryId()}) ON CONFLICT (id) DO NOTHING`,
        tx`SELECT registry_id FROM registry_identity WHERE id = 1`,
      ]);
      return only(rows, (row) => text(row, 'registry_id'), 'the registry id');
    },
  };
}
