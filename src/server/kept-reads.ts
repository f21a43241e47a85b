// The shortcut for the most common request, an anonymous `GET /nodes/{id}` whose answer is kept
// (src/server/node-answers.ts): answered from the node:http listener, before the adapter builds a
// Request and hono routes it. The node's stamp is still read from the store on every request, so a
// write through any instance is seen at once. Anything else (a token, a query, a body, a node not
// kept or not readable by everyone) goes on to the routes, which answer it the long way. Both ways
// write the same status, headers and bytes (test/server/kept-reads.test.ts).
// Reviews with a token and `?star=N` alone take a shortcut too, through the route's own checks and
// write (src/server/reviews.ts): the adapter and hono cost more than the review itself.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isNodeId } from '../contract/limits.js';
import { addReview, getNode } from '../contract/registry.js';
import { allowNodeRead, anonymousAccess } from './access.js';
import type { HttpError } from './errors.js';
import { notModified, type NodeAnswer, type NodeAnswers } from './node-answers.js';
import { reviewableNode, writeReview } from './reviews.js';
import { bearerOf, type Authenticate } from './route.js';
import type { NodeStamp, RegistryStore } from './store/registry-store.js';

/** `/nodes/` of `/nodes/{nodeId}`. */
const PREFIX = getNode.path.slice(0, getNode.path.indexOf('{'));
/** `/reviews` of `/nodes/{nodeId}/reviews`, and the one query the shortcut takes with it. */
const REVIEWS = `${addReview.path.slice(addReview.path.lastIndexOf('}') + 1)}?star=`;
/**
 * Hosts @hono/node-server takes as they are, without parsing them (its own test); any other Host goes
 * the long way and is refused there if it must be.
 */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
/**
 * A name with a port that test leaves out (60000 and up, below 1000): the adapter parses the URL and
 * takes the Host when the parser keeps it as it is. Decided once per Host, so that a server on such a
 * port answers from the shortcut too; at most HOSTS_KEPT decisions are kept.
 */
const PORTED_HOST = /^[a-z0-9._-]+:\d{1,5}$/;
const HOSTS_KEPT = 64;
const portedHosts = new Map<string, boolean>();

function plainHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  if (PLAIN_HOST.test(host)) return true;
  if (!PORTED_HOST.test(host)) return false;
  let kept = portedHosts.get(host);
  if (kept === undefined) {
    const url = `http://${host}/`;
    kept = URL.canParse(url) && new URL(url).host === host;
    if (portedHosts.size < HOSTS_KEPT) portedHosts.set(host, kept);
  }
  return kept;
}

/** The access log's line for one request. */
export const accessLine = (method: string, path: string, status: number, started: number) =>
  `${method} ${path} ${status} ${(performance.now() - started).toFixed(1)}ms`;

/** The path of a request's URL, without its query, as the access log names it. */
const pathOf = (url: string) => url.split('?', 1)[0];

/** Writes a kept answer as the adapter writes the routes' one: Content-Length only with a body (not to HEAD, nor a 304). */
function writeNodeAnswer(res: ServerResponse, answer: NodeAnswer, status: number, withBody: boolean): void {
  if (!withBody) {
    res.writeHead(status, { 'content-type': 'application/json', etag: answer.etag });
    res.end();
  } else {
    res.writeHead(status, { 'content-type': 'application/json', etag: answer.etag, 'Content-Length': answer.bytes.length });
    res.end(answer.bytes);
  }
}

/** Whether the shortcut may take this request: an anonymous read of `/nodes/{id}` without query or body. */
function eligible(req: IncomingMessage): string | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const url = req.url!;
  if (!url.startsWith(PREFIX)) return undefined;
  const { headers } = req;
  if (headers.authorization !== undefined || headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return undefined;
  if (!plainHost(headers.host)) return undefined;
  const id = url.slice(PREFIX.length);
  return isNodeId(id) ? id : undefined;
}

/** A review the shortcut may take: a bearer token, no body, and `?star=N` alone, which the contract's query admits. */
function eligibleReview(req: IncomingMessage): { id: string; token: string; star: number } | undefined {
  if (req.method !== 'POST') return undefined;
  const url = req.url!;
  const at = url.indexOf(REVIEWS);
  if (!url.startsWith(PREFIX) || at < 0) return undefined;
  const { headers } = req;
  if ((headers['content-length'] ?? '0') !== '0' || headers['transfer-encoding'] !== undefined || headers.expect !== undefined) return undefined;
  // Node keeps the first of two Authorization headers; the adapter joins them, and the route refuses that.
  const token = req.headersDistinct.authorization?.length === 1 ? bearerOf(headers.authorization) : undefined;
  if (token === undefined || !plainHost(headers.host)) return undefined;
  const id = url.slice(PREFIX.length, at);
  const star = url.slice(at + REVIEWS.length);
  const query = /^\d{1,2}$/.test(star) ? addReview.query.safeParse({ star }) : undefined;
  return query?.success && isNodeId(id) ? { id, token, star: query.data.star } : undefined;
}

/**
 * Returns the listener's shortcut: it answers the request and returns (or resolves) true, or touches
 * nothing and returns (or resolves) false, and the request goes on to the routes.
 */
export function createKeptReads(
  store: RegistryStore,
  nodeAnswers: NodeAnswers,
  accessLog: ((line: string) => void) | undefined,
  /** The answer to a store out of reach (503), written here: asked again the long way, a silent database would cost its deadline twice. */
  unavailable: (error: unknown) => HttpError | undefined,
  /** Takes reviews too, looking their tokens up with this (not when changes are rate limited: only the routes count them). */
  authenticate?: Authenticate,
) {
  let answered = 0;
  let reviewsAnswered = 0;
  const respond = (req: IncomingMessage, res: ServerResponse, stamp: NodeStamp | undefined, started: number): boolean => {
    const answer = stamp && nodeAnswers.cached(stamp);
    if (!answer) return false;
    try {
      allowNodeRead(anonymousAccess(stamp.publisher_id), stamp, answer.publisher);
    } catch {
      return false; // the routes answer it (404, 403 banned) in the errors' shape
    }
    const method = req.method!;
    const status = notModified(answer, method, req.headers['if-none-match']) ? 304 : 200;
    writeNodeAnswer(res, answer, status, status !== 304 && method !== 'HEAD');
    answered++;
    accessLog?.(accessLine(method, req.url!, status, started));
    return true;
  };
  const refuse = (req: IncomingMessage, res: ServerResponse, answer: HttpError | undefined, started: number): boolean => {
    if (!answer) return false;
    const body = JSON.stringify(answer.body());
    // As the adapter writes the route's answer: its headers in lower case (a Headers object's), then Content-Length.
    const headers = Object.entries(answer.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]);
    res.writeHead(answer.status, { 'content-type': 'application/json', ...Object.fromEntries(headers), 'Content-Length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
    accessLog?.(accessLine(req.method!, pathOf(req.url!), answer.status, started));
    return true;
  };
  const takeReview = async (req: IncomingMessage, res: ServerResponse, principalOf: Authenticate, review: { id: string; token: string; star: number }) => {
    const started = accessLog ? performance.now() : 0;
    try {
      const principal = await principalOf(review.token);
      if (!principal) return false; // 401 the long way
      const node = await reviewableNode(store, nodeAnswers, principal, review.id);
      writeNodeAnswer(res, await writeReview(store, nodeAnswers, principal, node, review.star), 200, true);
    } catch (error) {
      // A 404 or 403 is answered by the route in the errors' shape; so is a failure after the write,
      // which the route makes again: a review replaces the user's last one, so the same star changes nothing.
      return refuse(req, res, unavailable(error), started);
    }
    reviewsAnswered++;
    accessLog?.(accessLine('POST', pathOf(req.url!), 200, started));
    return true;
  };
  const readNow = store.getNodeStampNow;
  return {
    take(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> {
      const review = authenticate && eligibleReview(req);
      if (review) return takeReview(req, res, authenticate, review);
      const id = eligible(req);
      if (id === undefined) return false;
      const started = accessLog ? performance.now() : 0;
      // A store out of reach is answered 503 here; any other failure goes the long way, answered there in the errors' shape.
      if (!readNow) return store.getNodeStamp(id).then((stamp) => respond(req, res, stamp, started), (error) => refuse(req, res, unavailable(error), started));
      let stamp: NodeStamp | undefined;
      try {
        stamp = readNow(id);
      } catch {
        return false;
      }
      return respond(req, res, stamp, started);
    },
    /** Reads answered by the shortcut so far (the tests check that it is taken). */
    answered: () => answered,
    /** Reviews answered by the shortcut so far. */
    reviewsAnswered: () => reviewsAnswered,
  };
}
