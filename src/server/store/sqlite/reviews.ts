// Reviews on SQLite. Reviews that arrive in one turn of the event loop are written in one transaction,
// each in its own savepoint, and answered once it has committed: a commit (its locks and WAL writes)
// costs more than a review, and many reviewers at once would otherwise pay it each.
import type { RegistryStore, Reviewed } from '../registry-store.js';
import { decodeNodeState, only, NODE_STATE_COLUMNS } from '../rows.js';
import { now, type SqliteAccess } from './access.js';

interface QueuedReview {
  nodeId: string;
  userId: string;
  star: number;
  resolve(reviewed: Reviewed): void;
  reject(error: unknown): void;
}

/**
 * One review, unless the user is a member of the node's publisher; the node's rating follows (triggers
 * reviews_rating_*).
 */
function reviewOne(access: SqliteAccess, at: string, { nodeId, userId, star }: QueuedReview): Reviewed {
  const member = access.one(
    'SELECT 1 AS member FROM members WHERE publisher_id = (SELECT publisher_id FROM nodes WHERE id = ?) AND user_id = ?',
    nodeId,
    userId,
  );
  if (member) return { refused: 'member' };
  access
    .prepare(
      `INSERT INTO reviews (node_id, user_id, star, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (node_id, user_id) DO UPDATE SET star = excluded.star, updated_at = excluded.updated_at`,
    )
    .run(nodeId, userId, star, at, at);
  return {
    node: only(
      access.all(`SELECT ${NODE_STATE_COLUMNS} FROM nodes WHERE id = ?`, nodeId),
      decodeNodeState,
      `node ${nodeId}`,
    ),
  };
}

export function sqliteReviewStore(access: SqliteAccess): Pick<RegistryStore, 'review'> {
  // a review in a savepoint of its own (a transaction inside the one of its batch)
  const inSavepoint = access.db.transaction((at: string, review: QueuedReview) => reviewOne(access, at, review));
  const writeBatch = access.writing((batch: QueuedReview[], at: string) =>
    batch.map((review): { reviewed: Reviewed } | { error: unknown } => {
      try {
        return { reviewed: inSavepoint(at, review) };
      } catch (error) {
        return { error };
      }
    }),
  );
  let queued: QueuedReview[] = [];
  const writeQueued = () => {
    const batch = queued;
    queued = [];
    try {
      writeBatch(batch, now()).forEach((outcome, i) =>
        'reviewed' in outcome ? batch[i].resolve(outcome.reviewed) : batch[i].reject(outcome.error),
      );
    } catch (error) {
      for (const review of batch) review.reject(error); // the transaction did not commit
    }
  };
  return {
    review: (nodeId, userId, star) =>
      new Promise<Reviewed>((resolve, reject) => {
        if (queued.length === 0) setImmediate(writeQueued);
        queued.push({ nodeId, userId, star, resolve, reject });
      }),
  };
}
