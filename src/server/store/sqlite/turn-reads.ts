// Reads asked on every request (the tokens generation, a node's state) taken once per event-loop turn.
// Each SQLite read outside a transaction is a WAL read transaction of its own, whose locks cost more
// than its row; the requests of one turn share the value the first of them read.
import { setImmediate } from 'node:timers';
import type { Db } from '../db.js';

/**
 * `read(key, fn)` returns what `fn` returned for `key` earlier in this event-loop turn, else calls it.
 * What a request sees:
 * - a write through this connection (any statement that changes a row, triggers included) drops
 *   every value at once, so a write answered in this turn is seen by the next read, in this turn too;
 * - a write by another connection or process (another `serve`, `nodereg restore`) is seen from the
 *   next turn on: values are dropped when the turn ends (setImmediate), never kept longer;
 * - a read inside a transaction is never shared: it may see writes that roll back, which leave
 *   total_changes() moved only once, before the read.
 */
export function turnReads(db: Db) {
  // total_changes() reads no table: no read transaction, no lock
  const changes = db.prepare('SELECT total_changes()').pluck();
  const values = new Map<string, unknown>();
  let changesSeen = -1;
  let dropScheduled = false;
  const dropAll = () => {
    values.clear();
    dropScheduled = false;
  };
  return <T>(key: string, fn: () => T): T => {
    if (db.inTransaction) return fn();
    const total = changes.get() as number;
    if (total !== changesSeen) {
      values.clear();
      changesSeen = total;
    }
    if (values.has(key)) return values.get(key) as T;
    const value = fn();
    values.set(key, value);
    if (!dropScheduled) {
      dropScheduled = true;
      setImmediate(dropAll);
    }
    return value;
  };
}

export type TurnReads = ReturnType<typeof turnReads>;
