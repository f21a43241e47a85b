// The entry of the AI proxy's body worker (src/server/proxy/bodies.ts): prepares each body it is sent
// and posts the outcome back with the body's id, handing its bytes over rather than copying them.
import { parentPort } from 'node:worker_threads';
import { prepareBody, transferList } from './bodies.js';
import type { TaskKind } from './kinds.js';

parentPort!.on(
  'message',
  ({ id, kind, raw, forward }: { id: number; kind: TaskKind; raw: Uint8Array; forward: boolean }) => {
    const outcome = prepareBody(kind, raw, forward);
    parentPort!.postMessage({ id, outcome }, transferList(outcome));
  },
);
