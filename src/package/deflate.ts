// What the packer does to each small file before it is written (src/package/zip.ts): read it whole,
// take its CRC, deflate it unless its format is compressed already or deflate would not shrink it.
// Synchronous on purpose: it runs in the packer's worker threads (deflate-worker.ts), a batch of
// files per message, where one read call and one deflate call per file cost least; and in the
// calling thread for a small tree, with the same result byte for byte.
import { readFileSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';

/** Extensions stored as they are: deflating them again only costs time. */
export const STORED_EXTENSIONS = ['png', 'jpg', 'jpeg', 'webp', 'gif', 'zip', 'gz', 'bz2', 'xz', '7z', 'mp4', 'webm', 'safetensors', 'ckpt', 'pt', 'bin'];
const STORED = new Set(STORED_EXTENSIONS);

export const isStored = (path: string) => {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') && STORED.has(path.slice(dot + 1).toLowerCase());
};

/** zlib's default level: Info-ZIP's too, so the archive is the size of theirs (bench/pack.js). */
export const DEFLATE_LEVEL = 6;

/** A file to prepare: where to read it and the size it was listed with. */
export interface BatchFile {
  path: string;
  abs: string;
  size: number;
}

/** One file's outcome: its bytes are the next `length` bytes of the batch's data. */
export type PreparedEntry = { crc: number; method: 0 | 8; length: number } | { error: string; code?: string; changed?: true };

export interface PreparedBatch {
  entries: PreparedEntry[];
  /** The entries' bytes, one after the other, in a buffer of its own (so it can be transferred). */
  data: Uint8Array;
}

function prepare(file: BatchFile): { crc: number; method: 0 | 8; data: Uint8Array } {
  const data = readFileSync(file.abs);
  if (data.length !== file.size) throw Object.assign(new Error('changed'), { changed: true });
  const crc = crc32(data);
  if (isStored(file.path) || data.length === 0) return { crc, method: 0, data };
  const deflated = deflateRawSync(data, { level: DEFLATE_LEVEL });
  return deflated.length < data.length ? { crc, method: 8, data: deflated } : { crc, method: 0, data };
}

/** Prepares the files of a batch in order; a failure is kept in its entry, reported when its turn comes. */
export function prepareBatch(files: BatchFile[]): PreparedBatch {
  const entries: PreparedEntry[] = [];
  const parts: Uint8Array[] = [];
  let total = 0;
  for (const file of files) {
    try {
      const { crc, method, data } = prepare(file);
      entries.push({ crc, method, length: data.length });
      parts.push(data);
      total += data.length;
    } catch (error) {
      const { message, code, changed } = error as NodeJS.ErrnoException & { changed?: true };
      entries.push(changed ? { error: message, changed } : { error: message, code });
    }
  }
  // Not Buffer.concat: its result may share Node's buffer pool, which must not be transferred.
  const data = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const part of parts) {
    data.set(part, at);
    at += part.length;
  }
  return { entries, data };
}
