// What other instances change, heard rather than asked: triggers announce each write to a node's row and
// to a generation on the channel CHANGES (migrations 'change-notices' and 'rating-apart-from-generation'),
// and each instance LISTENs. While it hears its own beat (a notice it sends every BEAT_MS, delivered in
// commit order after every notice committed before it), a node's state and the tokens generation are
// answered from memory. A write to a node is announced with the node's state after it ('stamp {...}'),
// kept as told, so a node reviewed again and again is not asked for again; a write that moves more than
// the rating is announced first as 'node <id>' too, which drops what is kept (a delete only so). When
// the beats stop (a lost or silent connection) every read asks the database again, and when the LISTEN
// is made again what was kept is dropped, since notices were missed meanwhile.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { NodeState, RegistryStore } from '../registry-store.js';
import { decodeNodeState } from '../rows.js';

export const CHANGES_CHANNEL = 'nodereg_changes';
/**
 * How a node-state notice begins. The word is 'stamp', not 'state', because the notice is a wire format
 * between running instances, possibly of different versions, and the trigger that sends it is a shipped
 * migration whose text stays as it ran.
 */
export const NODE_STATE_NOTICE = 'stamp ';
/** How often an instance sends its beat. */
const BEAT_MS = 1_000;
/** What is kept is used while the last beat was heard this recently: the staleness allowed on a lost connection. */
export const STALE_MS = 3_000;
/** Node states kept at most: the least recently read go first. */
const MAX_KEPT_STATES = 10_000;
/** Transactions whose node-state notice was heard, remembered at most (a review's own is usually heard within ms). */
const MAX_HEARD_TRANSACTIONS = 1_000;

type CachedReads = Pick<RegistryStore, 'getNodeState' | 'tokenGeneration' | 'review'>;

/** Node states by lower-cased id, the least recently kept first, and the transactions whose states were told. */
function nodeStateMemory() {
  const states = new Map<string, NodeState>();
  const told = new Set<string>();
  return {
    states,
    keep(state: NodeState) {
      const key = state.id.toLowerCase();
      states.delete(key);
      states.set(key, state);
      const oldest = states.size > MAX_KEPT_STATES ? states.keys().next().value : undefined;
      if (oldest !== undefined) states.delete(oldest);
    },
    /** A node-state notice: the node's state after the write of `transaction`. */
    told(payload: string): NodeState {
      const row = JSON.parse(payload) as Record<string, unknown>;
      told.add(String(row.transaction));
      const oldest = told.size > MAX_HEARD_TRANSACTIONS ? told.values().next().value : undefined;
      if (oldest !== undefined) told.delete(oldest);
      return decodeNodeState(row);
    },
    wasTold: (transaction: string) => told.has(transaction),
  };
}

/**
 * Listens on a connection of its own (and beats on another) and returns the store's getNodeState and
 * tokenGeneration answered from memory while the notices are heard, and its review, whose node state is kept.
 */
export async function heardChanges(
  url: string,
  store: CachedReads,
  options: Pick<postgres.Options<{}>, 'backoff'>,
): Promise<CachedReads & { close(): Promise<void> }> {
  const beat = `beat ${randomBytes(8).toString('hex')}`;
  const memory = nodeStateMemory();
  const { states } = memory;
  let tokens: number | undefined;
  let heardAt = Number.NEGATIVE_INFINITY;
  // Moves with every notice and every drop: a read that saw it move while it ran keeps nothing.
  let notices = 0;
  let drops = 0;
  const drop = () => {
    notices++;
    drops++;
    states.clear();
    tokens = undefined;
  };
  const fresh = () => performance.now() - heardAt < STALE_MS;
  const heard = (payload: string) => {
    if (payload === beat) {
      heardAt = performance.now();
      return;
    }
    notices++;
    if (payload.startsWith(NODE_STATE_NOTICE)) {
      const state = memory.told(payload.slice(NODE_STATE_NOTICE.length));
      if (fresh()) memory.keep(state);
    } else if (payload.startsWith('node ')) states.delete(payload.slice(5));
    else tokens = undefined;
  };
  const watch = postgres(url, { ...options, max: 1, onnotice: () => {} });
  // onlisten runs after each LISTEN, the first and every one made again after a lost connection
  await watch.listen(CHANGES_CHANNEL, heard, drop);
  const beating = setInterval(() => void watch.notify(CHANGES_CHANNEL, beat).catch(() => {}), BEAT_MS);
  beating.unref();
  void watch.notify(CHANGES_CHANNEL, beat).catch(() => {});

  return {
    async getNodeState(id) {
      const kept = fresh() ? states.get(id.toLowerCase()) : undefined;
      if (kept) return kept;
      const before = notices;
      const state = await store.getNodeState(id);
      if (state && fresh() && notices === before) memory.keep(state);
      return state;
    },
    async tokenGeneration() {
      if (tokens !== undefined && fresh()) return tokens;
      const before = notices;
      const generation = await store.tokenGeneration();
      if (fresh() && notices === before) tokens = generation;
      return generation;
    },
    async review(nodeId, userId, star) {
      const dropsBefore = drops;
      const reviewed = await store.review(nodeId, userId, star);
      // The review's own notice comes after every notice committed before it: until it is heard, its
      // node state is the newest this instance knows, and this instance's next read shows its rating. A
      // listener lost meanwhile may have missed newer notices: then nothing is kept.
      if (reviewed.refused) return reviewed;
      const { node, changedBy } = reviewed;
      if (changedBy !== undefined && fresh() && drops === dropsBefore && !memory.wasTold(changedBy)) memory.keep(node);
      return reviewed;
    },
    async close() {
      clearInterval(beating);
      await watch.end({ timeout: 1 });
    },
  };
}
