// Reviews (`POST /nodes/{id}/reviews?star=N`): one per user per node, a second replaces the first. A
// PAT reviews as the user who created it.
import { allowNodeReadBy } from '../access.js';
import { forbidden, notFound } from '../errors.js';
import type { NodeAnswer } from '../node-answers.js';
import type { Principal } from '../route.js';
import type { NodeStamp } from '../store/registry-store.js';
import type { NodeDeps } from './nodes.js';

/**
 * The node to review, if the caller may read it (404, 403 banned) and is not one of its publisher's
 * members (403 forbidden). The checks need the node's stamp
 * and its publisher (cached with the node's answer), not the node's metadata nor its versions.
 */
export async function reviewableNode(
  { store, nodeAnswers }: NodeDeps,
  principal: Principal,
  nodeId: string,
): Promise<NodeStamp> {
  const stamp = await store.getNodeStamp(nodeId);
  if (!stamp) throw notFound(`node ${nodeId} not found`);
  const publisher = nodeAnswers.cached(stamp)?.publisher ?? (await store.getPublisher(stamp.publisher_id));
  await allowNodeReadBy(store, principal, stamp, publisher);
  await refuseOwnReview(store, principal, stamp.publisher_id);
  return stamp;
}

/** A publisher's own members (and its tokens) may not rate its nodes: their stars would be ballot stuffing. */
async function refuseOwnReview(store: NodeDeps['store'], principal: Principal, publisherId: string): Promise<void> {
  const ownToken = principal.kind !== 'user' && principal.publisherId === publisherId;
  if (ownToken || (await store.getRole(publisherId, principal.userId)) !== undefined)
    throw forbidden(`members of publisher ${publisherId} may not review its nodes`);
}

/** Writes the review and returns the node's answer: the cached one with the new rating. */
export async function writeReview(
  { store, nodeAnswers }: NodeDeps,
  principal: Principal,
  node: NodeStamp,
  star: number,
): Promise<NodeAnswer> {
  const reviewed = await store.review(node.id, principal.userId, star);
  return nodeAnswers.reviewed(reviewed) ?? (await nodeAnswers.answer((await store.getNode(node.id))!));
}
