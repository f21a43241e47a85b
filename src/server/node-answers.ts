// The serialised answer of `GET /nodes/{id}` (and of a review), kept per node and reused while the
// node's generation in the store is the one it was built at. Every write that changes the answer
// moves the generation in the same transaction (migration 'generations'), so one read of the node
// row says whether the bytes are current, also when other instances write to the same PostgreSQL.
// A review moves only the rating (migration 'rating-apart-from-generation'), which the node's state carries:
// a kept answer whose rating differs from the state's is serialised again with the state's rating.
import { hash } from 'node:crypto';
import type { Context } from 'hono';
import type { Node } from '../contract/resources.js';
import type { NodeRow, NodeState, PublisherRow, RegistryStore } from './store/registry-store.js';
import { oneNodeView } from './views.js';

export interface NodeAnswer {
  /** What the answer was built from: the node's identity and generation, and the public URL. */
  key: string;
  /** The node's publisher at that generation (a change to it moves the generation too). */
  publisher: PublisherRow | undefined;
  /** The Node the body is made of: the answer at another rating is this one with that rating. */
  view: Node;
  body: string;
  etag: string;
  /**
   * The body at a rating: the text around the rating's value, joined (ratingJoin). Made when the rating
   * first changes, so that an answer never re-rated holds its text once, not twice.
   */
  atRating?: (rating: number | undefined) => string;
}

/** Answers kept at most: the least recently used go first. */
const MAX_ANSWERS = 10_000;

export function createNodeAnswers(store: RegistryStore, publicUrl: () => string) {
  const answers = new Map<string, NodeAnswer>();
  const keyOf = (node: NodeState) => `${node.created_at}\n${node.generation}\n${publicUrl()}`;

  /** The answer kept for the node in this state, if it is current, with the state's rating. */
  const cached = (node: NodeState): NodeAnswer | undefined => {
    const answer = answers.get(node.id);
    if (!answer || answer.key !== keyOf(node)) return undefined;
    if (answer.view.rating !== node.rating) {
      const atRating = answer.atRating ?? ratingJoin(answer.view);
      return keep(node.id, answer.key, answer.publisher, { ...answer.view, rating: node.rating }, atRating);
    }
    answers.delete(node.id); // most recently used last
    answers.set(node.id, answer);
    return answer;
  };

  return {
    cached,

    /** The node's publisher kept with its answer, if the answer is current (its rating aside). */
    publisherOf(node: NodeState): { publisher: PublisherRow | undefined } | undefined {
      const answer = answers.get(node.id);
      return answer && answer.key === keyOf(node) ? { publisher: answer.publisher } : undefined;
    },

    /** The current answer for this row of the node: the kept one, else built (with `publisher` when known). */
    async answer(node: NodeRow, publisher?: PublisherRow): Promise<NodeAnswer> {
      const kept = cached(node);
      if (kept) return kept;
      const key = keyOf(node);
      publisher ??= await store.getPublisher(node.publisher_id);
      return keep(node.id, key, publisher, await oneNodeView(store, node, publicUrl(), publisher));
    },
  };

  function keep(
    id: string,
    key: string,
    publisher: PublisherRow | undefined,
    view: Node,
    atRating?: (rating: number | undefined) => string,
  ): NodeAnswer {
    const body = atRating ? atRating(view.rating) : JSON.stringify(view);
    const answer = { key, publisher, view, body, etag: `"${hash('sha1', body, 'base64url')}"`, atRating };
    answers.delete(id);
    answers.set(id, answer);
    if (answers.size > MAX_ANSWERS) answers.delete(answers.keys().next().value!);
    return answer;
  }
}

export type NodeAnswers = ReturnType<typeof createNodeAnswers>;

/**
 * JSON.stringify of the view at any rating, as the text before and after the rating's value, each
 * serialised once: a node reviewed often is not serialised whole again for each review.
 */
export function ratingJoin(view: Node): (rating: number | undefined) => string {
  const entries = Object.entries(view);
  const at = entries.findIndex(([name]) => name === 'rating');
  if (at === -1) return (rating) => JSON.stringify({ ...view, rating });
  // `{}` when no field before (or after) is serialised: JSON.stringify leaves out undefined values
  const head = JSON.stringify(Object.fromEntries(entries.slice(0, at)));
  const tail = JSON.stringify(Object.fromEntries(entries.slice(at + 1)));
  const before = head === '{}' ? '{"rating":' : `${head.slice(0, -1)},"rating":`;
  const after = tail === '{}' ? '}' : `,${tail.slice(1)}`;
  // an unset rating is left out, as JSON.stringify leaves it out
  return (rating) =>
    rating === undefined ? JSON.stringify({ ...view, rating }) : before + JSON.stringify(rating) + after;
}

/** Whether a request with this method and If-None-Match already has the answer: then it is a 304. */
export function notModified(answer: NodeAnswer, method: string, ifNoneMatch: string | undefined): boolean {
  if (!ifNoneMatch || (method !== 'GET' && method !== 'HEAD')) return false;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === answer.etag);
}

/**
 * The answer as a response: 304 when the client's If-None-Match names it. Made by the context, so that
 * headers a middleware set before the route (c.header) are on it too.
 */
export function respondWith(c: Context, answer: NodeAnswer): Response {
  const headers = { etag: answer.etag, 'content-type': 'application/json' };
  if (notModified(answer, c.req.method, c.req.header('if-none-match'))) return c.body(null, 304, headers);
  return c.body(answer.body, 200, headers);
}
