// What to query in a parsed file: the top-level statements that hold a rule's `requires`, in pieces
// small enough that one query call's matches stay bounded.
import type { Node, QueryOptions } from 'web-tree-sitter';
import type { Finder } from './gate.js';

/** Ranges this close are queried as one: a query call costs more than walking a short gap. */
const JOIN_GAP = 256;
/** At most this much source per query call (bar one node's own matches): its matches come back all at once. */
const QUERY_BYTES = 64 * 1024;
/**
 * A query starts matches at most this deep below the node it is given: past 65,535 levels the query
 * took minutes (100,000 nested `eval(` calls: 179 s; with this bound 0.2 s). CPython refuses a file
 * with brackets nested past 200 levels, so no code that runs lies deeper.
 */
export const MAX_START_DEPTH = 60_000;

type QueryRange = { startIndex: number; endIndex: number };

/**
 * The top-level statements that hold a place where `find` holds, found as they are asked for.
 * Every match of a rule holds such a place inside its own nodes (Rule.requires), and every node below
 * the root lies inside one top-level statement: querying these ranges finds what querying the whole
 * tree finds, and a file that names `torch` once is queried for it in that one statement.
 */
export function* statementsHolding(root: Node, next: Finder): Generator<Node> {
  // An ERROR root's children are looked through one by one by firstChildForIndex, from the first each
  // time (quadratic: a large file that does not parse would hold a scan worker for seconds): there they
  // are walked once, in order.
  const children = root.type === 'ERROR' ? root.children : undefined;
  let i = 0;
  const statementAt = (at: number) => {
    if (!children) return root.firstChildForIndex(at);
    while (i < children.length && children[i].endIndex <= at) i++;
    return children[i] ?? null;
  };
  for (let at = next(0); at >= 0; ) {
    const statement = statementAt(at);
    if (!statement) break;
    yield statement;
    at = next(statement.endIndex > at ? statement.endIndex : at + 1);
  }
}

/** One query call: on `node`, over a range or not; `inside`: only matches within the range count. */
interface Piece {
  node: Node;
  options: QueryOptions;
  inside?: boolean;
}

/**
 * What to query for these statements, in pieces of at most QUERY_BYTES (one query call returns all its matches at
 * once, so a query over a large file would hold hundreds of megabytes). Small neighbours are queried as one range
 * of the root. A larger statement is taken apart: its own matches (maxStartDepth 0), then its children, small ones
 * in ranges, larger ones taken apart in turn. A root that is itself an ERROR node (a file that does not parse:
 * brackets never closed) can have a child per token, and a query over a range of it reads them all, for every
 * statement (a long line of open brackets would hold a scan worker for minutes); there each statement is queried on
 * its own. Pieces are made as they are asked for: a rule that has found its fill stops asking.
 */
export function* queried(root: Node, statements: Iterable<Node>): Generator<Piece> {
  const error = root.type === 'ERROR';
  let range: QueryRange | undefined;
  const whole = (r: QueryRange): Piece => ({ node: root, options: { ...r, maxStartDepth: MAX_START_DEPTH } });
  for (const statement of statements) {
    const { startIndex, endIndex } = statement;
    if (endIndex - startIndex > QUERY_BYTES) {
      yield* apart(statement);
    } else if (error) {
      yield { node: statement, options: { maxStartDepth: MAX_START_DEPTH } };
    } else if (range && startIndex - range.endIndex <= JOIN_GAP && endIndex - range.startIndex <= QUERY_BYTES) {
      range.endIndex = Math.max(range.endIndex, endIndex);
    } else {
      if (range) yield whole(range);
      range = { startIndex, endIndex };
    }
  }
  if (range) yield whole(range);
}

/** A node over QUERY_BYTES, in pieces: its own matches, then its children's (see `queried`). */
function* apart(top: Node): Generator<Piece> {
  const stack: [Node, number][] = [[top, 0]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    yield { node, options: { maxStartDepth: 0 } };
    if (depth >= MAX_START_DEPTH) continue; // as deep as a query looks
    const larger: Node[] = [];
    let range: QueryRange | undefined;
    const piece = (r: QueryRange): Piece => ({
      node,
      options: { ...r, maxStartDepth: MAX_START_DEPTH - depth },
      inside: true,
    });
    for (const child of node.children) {
      if (!child) continue;
      const { startIndex, endIndex } = child;
      if (endIndex - startIndex > QUERY_BYTES) larger.push(child);
      else if (range && endIndex - range.startIndex <= QUERY_BYTES) range.endIndex = endIndex;
      else {
        if (range) yield piece(range);
        range = { startIndex, endIndex };
      }
    }
    if (range) yield piece(range);
    for (let i = larger.length - 1; i >= 0; i--) stack.push([larger[i], depth + 1]);
  }
}
