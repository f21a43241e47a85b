// The entry of a packer worker thread (src/package/zip.ts): prepares each batch of files it is sent
// and posts the result back with the batch's id, handing its buffer over rather than copying it;
// the writer hands the buffers back with later batches.
import { parentPort } from 'node:worker_threads';
import { prepareBatch, type BatchFile } from './deflate.js';

/** Buffers the writer is done with, to be filled again. */
const spares: ArrayBuffer[] = [];

parentPort!.on('message', ({ id, files, returned }: { id: number; files: BatchFile[]; returned: ArrayBuffer[] }) => {
  spares.push(...returned);
  const batch = prepareBatch(files, spares);
  parentPort!.postMessage({ id, batch }, [batch.data.buffer as ArrayBuffer]);
});
