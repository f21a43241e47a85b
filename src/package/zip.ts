// The deterministic, streamed archive of DESIGN.md §6, written with yazl: entries in UTF-8 byte
// order, `/` separators, UTF-8 names, DOS time 1980-01-01 00:00 in every time zone, no extra fields,
// modes 0644/0755, deflate except for formats that are compressed already. Small files are deflated
// concurrently on the zlib thread pool and written in order; large ones are streamed. The sha256 and
// the size are computed while the bytes go to disk.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { yazl } from './cjs.js';
import { compareUtf8, type SelectedFile } from './files.js';

/** Extensions stored as they are: deflating them again only costs time. */
export const STORED_EXTENSIONS = ['png', 'jpg', 'jpeg', 'webp', 'gif', 'zip', 'gz', 'bz2', 'xz', '7z', 'mp4', 'webm', 'safetensors', 'ckpt', 'pt', 'bin'];
const STORED = new Set(STORED_EXTENSIONS);

export const isStored = (path: string) => {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') && STORED.has(path.slice(dot + 1).toLowerCase());
};

/** Files up to this size are read whole and deflated concurrently; larger ones are streamed. */
const SMALL_FILE = 1024 * 1024;
/** Bytes of small files read but not yet written, plus bytes yazl has written that the disk has not taken. */
const WINDOW_BYTES = 8 * 1024 * 1024;
const WINDOW_ENTRIES = 32;

export interface ArchiveResult {
  path: string;
  /** Archive size in bytes. */
  size: number;
  sha256: string;
  files: number;
  /** Sum of the files' sizes. */
  unpackedSize: number;
}

/** The archive grew past `--max-size`; lists the largest files so the user knows what to leave out. */
export class ArchiveTooLargeError extends Error {
  constructor(readonly limit: number, readonly largest: SelectedFile[]) {
    super(`the archive is larger than the limit of ${limit} bytes`);
    this.name = 'ArchiveTooLargeError';
  }
}

/** A file changed size between listing and packing. */
export class FileChangedError extends Error {
  constructor(readonly file: string) {
    super(`${file} changed while it was being packed; pack again`);
    this.name = 'FileChangedError';
  }
}

/** What yazl keeps of an entry: its state, and the function that writes its data (holding the bytes). */
interface YazlEntry {
  state: number;
  doFileDataPump: (() => void) | null;
}
const FILE_DATA_DONE = 3;

export interface ArchiveOptions {
  /** Compressed size limit in bytes. */
  maxSize?: number;
  /** Called as the archive grows, with its bytes written so far. */
  onProgress?: (archiveBytes: number) => void;
}

/** Writes `files` (any order) into a zip at `outPath`. On failure the partial file is removed. */
export async function writeArchive(files: SelectedFile[], outPath: string, options: ArchiveOptions = {}): Promise<ArchiveResult> {
  const sorted = [...files].sort((a, b) => compareUtf8(a.path, b.path));
  const maxSize = options.maxSize ?? Infinity;
  const zip = new yazl.ZipFile();
  const hash = createHash('sha256');
  let written = 0;

  // Small entries handed to yazl and not yet written; yazl keeps each one's compressed bytes until the
  // whole archive is done, so they are let go here once written, keeping memory flat.
  const pending: { entry: YazlEntry; size: number }[] = [];
  let pendingBytes = 0;
  let wake: (() => void) | undefined;
  const release = () => {
    while (pending.length && pending[0].entry.state >= FILE_DATA_DONE) {
      const { entry, size } = pending.shift()!;
      entry.doFileDataPump = null;
      pendingBytes -= size;
    }
    wake?.();
  };
  const output = zip.outputStream as unknown as Readable;
  const roomFor = (size: number) =>
    (pendingBytes + size + output.readableLength <= WINDOW_BYTES && pending.length < WINDOW_ENTRIES) || (pending.length === 0 && output.readableLength === 0);

  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      written += chunk.length;
      if (written > maxSize) return callback(new ArchiveTooLargeError(maxSize, largestFiles(sorted)));
      hash.update(chunk);
      options.onProgress?.(written);
      callback(null, chunk);
      release();
    },
  });
  let failed: unknown;
  const fail = (error: unknown) => {
    failed ??= error;
    output.destroy(error as Error);
    wake?.();
  };
  output.on('error', () => {}); // reported through `failed`; yazl may still write after a failure
  const done = pipeline(output, counter, createWriteStream(outPath)).catch((error) => fail(error));
  zip.on('error', fail);
  let streaming = '';

  try {
    const epoch = new Date(1980, 0, 1); // local time: yazl writes DOS times in the local zone
    for (const file of sorted) {
      if (failed) break;
      const entryOptions = { mtime: epoch, forceDosTimestamp: true, mode: 0o100000 | file.mode, compress: !isStored(file.path) };
      if (file.size > SMALL_FILE) {
        zip.addReadStreamLazy(file.path, { ...entryOptions, size: file.size }, (cb) => {
          streaming = file.path;
          cb(null, createReadStream(file.abs).on('error', fail));
        });
        continue;
      }
      while (!roomFor(file.size) && !failed) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      if (failed) break;
      const data = await readFile(file.abs);
      if (data.length !== file.size) throw new FileChangedError(file.path);
      zip.addBuffer(data, file.path, entryOptions);
      const entries = (zip as unknown as { entries: YazlEntry[] }).entries;
      pending.push({ entry: entries[entries.length - 1], size: file.size });
      pendingBytes += file.size;
    }
    if (!failed) zip.end();
    await done;
    if (failed) throw failed;
  } catch (error) {
    fail(error);
    await done;
    await rm(outPath, { force: true });
    const reason = failed ?? error;
    if (String((reason as Error)?.message).includes('unexpected number of bytes')) throw new FileChangedError(streaming);
    throw reason;
  }
  return {
    path: outPath,
    size: written,
    sha256: hash.digest('hex'),
    files: sorted.length,
    unpackedSize: sorted.reduce((sum, f) => sum + f.size, 0),
  };
}

/** The ten largest files, largest first (ties by name). */
export function largestFiles(files: SelectedFile[], count = 10): SelectedFile[] {
  return [...files].sort((a, b) => b.size - a.size || compareUtf8(a.path, b.path)).slice(0, count);
}
