// A review (`POST /nodes/{id}/reviews?star=N`): its checks and its write.
import { allowNodeReadBy } from './access.js';
import { notFound } from './errors.js';
import type { NodeAnswer, NodeAnswers } from './node-answers.js';
import type { Principal } from './route.js';
import type { NodeStamp, RegistryStore } from './store/registry-store.js';

/**
 * The node to review, if the caller may read it (404, 403 banned). The checks need the node's stamp
 * and its publisher (kept with the node's answer), not the node's metadata nor its versions.
 */
export async function reviewableNode(store: RegistryStore, nodeAnswers: NodeAnswers, principal: Principal, nodeId: string): Promise<NodeStamp> {
  const stamp = await store.getNodeStamp(nodeId);
  if (!stamp) throw notFound(`node ${nodeId} not found`);
  const publisher = nodeAnswers.cached(stamp)?.publisher ?? (await store.getPublisher(stamp.publisher_id));
  await allowNodeReadBy(store, principal, stamp, publisher);
  return stamp;
}

/**
 * Writes the review and returns the node's answer: the kept one with the new rating. A PAT reviews as
 * the user who created it: one review per user per node, and a second one replaces the first.
 */
export async function writeReview(store: RegistryStore, nodeAnswers: NodeAnswers, principal: Principal, node: NodeStamp, star: number): Promise<NodeAnswer> {
  const reviewed = await store.review(node.id, principal.userId, star);
  return nodeAnswers.reviewed(reviewed) ?? (await nodeAnswers.answer((await store.getNode(node.id))!));
}
