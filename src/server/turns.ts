// Work an upload brings to the event loop runs in steps of bounded size and gives other requests a
// turn between steps, so that no upload holds the server however large it is.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** What to await between two steps: it gives the event loop a turn (setImmediate) once `ms` have passed since the last one. */
export function turnsEvery(ms: number): () => Promise<void> {
  let turn = performance.now();
  return async () => {
    if (performance.now() - turn < ms) return;
    await nextTurn();
    turn = performance.now();
  };
}
