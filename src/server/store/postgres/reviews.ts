// Reviews on PostgreSQL: one statement (the function review_node, migration 'review-function'), so a
// review costs one round trip and one commit.
import type postgres from 'postgres';
import type { RegistryStore } from '../registry-store.js';
import { count, decodeReviewedNode, only } from '../rows.js';
import { now } from './columns.js';

export function postgresReviewStore(sql: postgres.Sql): Pick<RegistryStore, 'review'> {
  return {
    async review(nodeId, userId, star) {
      const rows = await sql`SELECT * FROM review_node(${nodeId}, ${userId}, ${star}, ${now()})`;
      return {
        node: only(rows, decodeReviewedNode, `node ${nodeId}`),
        previousGeneration: only(rows, (row) => count(row, 'previous_generation'), `node ${nodeId}`),
      };
    },
  };
}
