// What the packer does to each small file before it is written (src/package/zip.ts): read it whole,
// take its CRC, deflate it unless its format is compressed already or deflate would not shrink it.
// Synchronous on purpose: it runs in the packer's worker threads (deflate-worker.ts), a batch of
// files per message, where one read call and one deflate call per file cost least; and in the
// calling thread for a small tree, with the same result byte for byte.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32, deflateRawSync } from 'node:zlib';
import { isLfsPointer } from './lfs.js';

/** Extensions stored as they are: deflating them again only costs time. */
export const STORED_EXTENSIONS = [
  'png',
  'jpg',
  'jpeg',
  'webp',
  'gif',
  'zip',
  'gz',
  'bz2',
  'xz',
  '7z',
  'mp4',
  'webm',
  'safetensors',
  'ckpt',
  'pt',
  'bin',
];
const STORED = new Set(STORED_EXTENSIONS);

export const isStored = (path: string) => {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') && STORED.has(path.slice(dot + 1).toLowerCase());
};

/**
 * Level 4, not zlib's default 6: on the benchmark's Python source (bench/pack.js) it deflates in much
 * less CPU time for an archive barely larger than Info-ZIP's at its default. docs/decisions.md.
 */
export const DEFLATE_LEVEL = 4;

/** Batches hold up to this many bytes of files (one larger file goes alone); buffers are this size at least. */
export const BATCH_BUFFER = 256 * 1024;

/** A file to prepare: where to read it and the size it was listed with. */
export interface BatchFile {
  path: string;
  abs: string;
  size: number;
}

/** One file's outcome: its bytes are the next `length` bytes of the batch's data. */
/** `lfsPointer`: the file is a Git LFS pointer (lfs.ts), told from the bytes read here. */
export type PreparedEntry =
  | { crc: number; method: 0 | 8; length: number; lfsPointer?: true }
  | { error: string; code?: string; changed?: true };

export interface PreparedBatch {
  entries: PreparedEntry[];
  /** The entries' bytes, one after the other, in a buffer of its own (so it can be transferred). */
  data: Uint8Array;
}

class FileChanged extends Error {}

/**
 * The deflated bytes, or undefined when they would not be fewer than the original's. zlib writes into
 * one buffer of the original's size and gives up once it is full, so an incompressible file costs
 * neither a second buffer nor the rest of its deflate. The bytes do not depend on the buffer's size.
 */
function deflateSmaller(original: Buffer): Buffer | undefined {
  try {
    return deflateRawSync(original, {
      level: DEFLATE_LEVEL,
      chunkSize: Math.max(original.length, 64),
      maxOutputLength: Math.max(original.length - 1, 1),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
    throw error;
  }
}

/** Reads the file into `into` at `at`, exactly the size it was listed with. */
function readInto(file: BatchFile, into: Buffer, at: number): void {
  const fd = openSync(file.abs, 'r');
  try {
    if (fstatSync(fd).size !== file.size) throw new FileChanged();
    for (let done = 0; done < file.size; ) {
      const read = readSync(fd, into, at + done, file.size - done, null);
      if (read === 0) throw new FileChanged();
      done += read;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Prepares the files of a batch in order, each read straight into the batch's buffer and replaced
 * there by its deflated form when that is smaller. The buffer is a spare one handed back by the
 * writer when one is large enough (so memory stays flat however many batches pass), else a new one.
 * A failure is kept in its entry and reported when its turn comes.
 */
export function prepareBatch(files: BatchFile[], spares: ArrayBuffer[]): PreparedBatch {
  const entries: PreparedEntry[] = [];
  const size = files.reduce((sum, file) => sum + file.size, 0);
  const spare = spares.findIndex((buffer) => buffer.byteLength >= size);
  // allocUnsafeSlow: a buffer of its own, never a slice of Node's pool, so it can be transferred.
  const data =
    spare >= 0 ? Buffer.from(spares.splice(spare, 1)[0]) : Buffer.allocUnsafeSlow(Math.max(size, BATCH_BUFFER));
  let at = 0;
  for (const file of files) {
    try {
      readInto(file, data, at);
    } catch (error) {
      const { message, code } = error as NodeJS.ErrnoException;
      entries.push(error instanceof FileChanged ? { error: message, changed: true } : { error: message, code });
      continue;
    }
    const original = data.subarray(at, at + file.size);
    const lfsPointer = isLfsPointer(file.size, original) || undefined;
    const crc = crc32(original);
    let method: 0 | 8 = 0;
    let length = file.size;
    const deflated = isStored(file.path) || file.size === 0 ? undefined : deflateSmaller(original);
    if (deflated) {
      data.set(deflated, at);
      method = 8;
      length = deflated.length;
    }
    entries.push({ crc, method, length, lfsPointer });
    at += length;
  }
  return { entries, data: data.subarray(0, at) };
}
