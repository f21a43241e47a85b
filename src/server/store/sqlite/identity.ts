// The registry's own id on SQLite (RegistryStore.registryId).
import type { RegistryStore } from '../registry-store.js';
import { only, text } from '../rows.js';
import type { SqliteAccess } from './access.js';
import { newRegistryId } from '../registry-id.js';

export function sqliteIdentityStore(access: SqliteAccess): Pick<RegistryStore, 'registryId'> {
  return {
    async registryId() {
      access
        .prepare('INSERT INTO registry_identity (id, registry_id) VALUES (1, ?) ON CONFLICT (id) DO NOTHING')
        .run(newRegistryId());
      return only(
        access.all('SELECT registry_id FROM registry_identity WHERE id = 1'),
        (row) => text(row, 'registry_id'),
        'the registry id',
      );
    },
  };
}
