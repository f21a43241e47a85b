// Work an upload brings to the event loop runs in steps of bounded size and gives other requests a
// turn between steps, so that no upload holds the server however large it is.
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Returns the function to await between two steps: it yields to the event loop (setImmediate), so that
 * other requests get a turn, once `ms` have passed since it last yielded, and otherwise returns at once.
 */
export function yieldEvery(ms: number): () => Promise<void> {
  let lastYield = performance.now();
  return async () => {
    if (performance.now() - lastYield < ms) return;
    await nextTurn();
    lastYield = performance.now();
  };
}
