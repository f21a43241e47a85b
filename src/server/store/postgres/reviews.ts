// Reviews on PostgreSQL: one statement (the function rate_node, migration 'rating-apart-from-generation'),
// so a review costs one round trip and one commit, the refusal of the publisher's own members included.
import type postgres from 'postgres';
import type { RegistryStore } from '../registry-store.js';
import { decodeNodeState, only } from '../rows.js';
import { now } from './columns.js';

export function postgresReviewStore(sql: postgres.Sql): Pick<RegistryStore, 'review'> {
  return {
    async review(nodeId, userId, star) {
      const rows = await sql`SELECT * FROM rate_node(${nodeId}, ${userId}, ${star}, ${now()})`;
      const [row] = rows;
      if (row?.member === true) return { refused: 'member' };
      const node = only(rows, decodeNodeState, `node ${nodeId}`);
      return typeof row.changed_by === 'string' ? { node, changedBy: row.changed_by } : { node };
    },
  };
}
