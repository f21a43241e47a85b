// Trusts and exchanged tokens on SQLite (store/trusts.ts).
import { randomUUID } from 'node:crypto';
import { first, only } from '../rows.js';
import {
  decodeExchange,
  decodeTrust,
  exchangeValues,
  forSqlite,
  TRUST_SQL,
  trustValues,
  type TrustStore,
} from '../trusts.js';
import { now, type SqliteAccess } from './access.js';

export function sqliteTrustStore(access: SqliteAccess): TrustStore {
  const remove = access.writing((publisherId: string, id: string) => {
    access.prepare(forSqlite(TRUST_SQL.removeExchanges)).run(id);
    return access.prepare(forSqlite(TRUST_SQL.removeTrust)).run(publisherId, id).changes > 0;
  });
  return {
    async addTrust(input) {
      const id = randomUUID();
      access.prepare(forSqlite(TRUST_SQL.insertTrust)).run(...trustValues(id, input, now()));
      return only(access.all(forSqlite(TRUST_SQL.trust), id), decodeTrust, `trust ${id}`);
    },
    listTrusts: async (publisherId) => access.all(forSqlite(TRUST_SQL.trusts), publisherId).map(decodeTrust),
    removeTrust: async (publisherId, id) => remove(publisherId, id),
    async createExchange(input) {
      const id = `oidc_${randomUUID()}`;
      access.prepare(forSqlite(TRUST_SQL.insertExchange)).run(...exchangeValues(id, input, now()));
      return only(access.all(forSqlite(TRUST_SQL.exchange), id), decodeExchange, `exchange ${id}`);
    },
    useExchange: async (hash) => first(access.all(forSqlite(TRUST_SQL.exchangeByHash), hash), decodeExchange),
    getExchange: async (id) => first(access.all(forSqlite(TRUST_SQL.exchange), id), decodeExchange),
  };
}
