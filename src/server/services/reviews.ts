// Reviews (`POST /nodes/{id}/reviews?star=N`): one per user per node, a second replaces the first. A
// PAT reviews as the user who created it.
import { allowNodeReadBy } from '../access.js';
import { forbidden, notFound } from '../errors.js';
import type { NodeAnswer } from '../node-answers.js';
import type { Principal } from '../route.js';
import type { NodeState } from '../store/registry-store.js';
import type { NodeDeps } from './nodes.js';

/**
 * The node to review, if the caller may read it (404, 403 banned) and is not its publisher's own token
 * (403 forbidden). The checks need the node's state and its publisher (cached with the node's answer),
 * not the node's metadata nor its versions; the store's review refuses the publisher's members.
 */
export async function reviewableNode(
  { store, nodeAnswers }: NodeDeps,
  principal: Principal,
  nodeId: string,
): Promise<NodeState> {
  const state = await store.getNodeState(nodeId);
  if (!state) throw notFound(`node ${nodeId} not found`);
  const kept = nodeAnswers.publisherOf(state);
  const publisher = kept ? kept.publisher : await store.getPublisher(state.publisher_id);
  await allowNodeReadBy(store, principal, state, publisher);
  if (principal.kind !== 'user' && principal.publisherId === state.publisher_id) throw ownReview(state.publisher_id);
  return state;
}

/** A publisher's own members (and its tokens) may not rate its nodes: their stars would be ballot stuffing. */
const ownReview = (publisherId: string) => forbidden(`members of publisher ${publisherId} may not review its nodes`);

/** Writes the review and returns the node's answer: the kept one with the new rating, else built. */
export async function writeReview(
  { store, nodeAnswers }: NodeDeps,
  principal: Principal,
  node: NodeState,
  star: number,
): Promise<NodeAnswer> {
  const reviewed = await store.review(node.id, principal.userId, star);
  if (reviewed.refused) throw ownReview(node.publisher_id);
  return nodeAnswers.cached(reviewed.node) ?? (await nodeAnswers.answer((await store.getNode(node.id))!));
}
