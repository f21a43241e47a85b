// Reviews on PostgreSQL. The node's row is locked first, so the generation before and after are this
// review's alone; the trigger reviews_rating keeps the node's sum and count. The three statements are
// pipelined in one transaction.
import type postgres from 'postgres';
import type { RegistryStore } from '../registry-store.js';
import { count, decodeReviewedNode, only, STAMP_COLUMNS } from '../rows.js';
import { now } from './columns.js';

export function postgresReviewStore(sql: postgres.Sql): Pick<RegistryStore, 'review'> {
  return {
    async review(nodeId, userId, star) {
      const at = now();
      const [before, , after] = await sql.begin((tx) => [
        tx`SELECT generation FROM nodes WHERE id = ${nodeId} FOR UPDATE`,
        tx`INSERT INTO reviews (node_id, user_id, star, created_at, updated_at) VALUES (${nodeId}, ${userId}, ${star}, ${at}, ${at})
           ON CONFLICT (node_id, user_id) DO UPDATE SET star = excluded.star, updated_at = excluded.updated_at`,
        tx.unsafe(`SELECT ${STAMP_COLUMNS}, rating FROM nodes WHERE id = $1`, [nodeId]),
      ]);
      return {
        node: only(after, decodeReviewedNode, `node ${nodeId}`),
        previousGeneration: only(before, (row) => count(row, 'generation'), `node ${nodeId}`),
      };
    },
  };
}
