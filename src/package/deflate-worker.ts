// The entry of a packer worker thread (src/package/zip.ts): prepares each batch of files it is sent
// and posts the result back with the batch's id, handing its buffer over rather than copying it.
import { parentPort } from 'node:worker_threads';
import { prepareBatch, type BatchFile } from './deflate.js';

parentPort!.on('message', ({ id, files }: { id: number; files: BatchFile[] }) => {
  const batch = prepareBatch(files);
  parentPort!.postMessage({ id, batch }, [batch.data.buffer as ArrayBuffer]);
});
