// Trusts and exchanged tokens on PostgreSQL (store/trusts.ts).
import { randomUUID } from 'node:crypto';
import type postgres from 'postgres';
import { first, only } from '../rows.js';
import { decodeExchange, decodeTrust, exchangeValues, TRUST_SQL, trustValues, type TrustStore } from '../trusts.js';
import { now } from './columns.js';

type Value = postgres.ParameterOrJSON<never>;

export function postgresTrustStore(sql: postgres.Sql): TrustStore {
  const run = (statement: string, values: unknown[]) => sql.unsafe(statement, values as Value[]);
  return {
    async addTrust(input) {
      const id = randomUUID();
      await run(TRUST_SQL.insertTrust, trustValues(id, input, now()));
      return only(await run(TRUST_SQL.trust, [id]), decodeTrust, `trust ${id}`);
    },
    listTrusts: async (publisherId) => (await run(TRUST_SQL.trusts, [publisherId])).map(decodeTrust),
    removeTrust: (publisherId, id) =>
      sql.begin(async (tx) => {
        await tx.unsafe(TRUST_SQL.removeExchanges, [id]);
        const removed = await tx.unsafe(TRUST_SQL.removeTrust, [publisherId, id]);
        return removed.count > 0;
      }),
    async createExchange(input) {
      const id = `oidc_${randomUUID()}`;
      await run(TRUST_SQL.insertExchange, exchangeValues(id, input, now()));
      return only(await run(TRUST_SQL.exchange, [id]), decodeExchange, `exchange ${id}`);
    },
    useExchange: async (hash) => first(await run(TRUST_SQL.exchangeByHash, [hash]), decodeExchange),
    getExchange: async (id) => first(await run(TRUST_SQL.exchange, [id]), decodeExchange),
  };
}
