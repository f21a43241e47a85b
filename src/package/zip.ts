// The deterministic, streamed archive of DESIGN.md §6, written by this small zip writer: entries in
// UTF-8 byte order, `/` separators, the UTF-8 name flag, DOS time 1980-01-01 00:00, no extra fields,
// modes 0644/0755, deflate except for formats that are compressed already (stored as they are, and
// so is a file that deflate would not make smaller). Files up to 1 MiB are read, checksummed and
// deflated ahead, several at once on zlib's thread pool, and written in order; larger ones are
// streamed with a data descriptor. The bytes depend only on the files, never on how many deflate at
// once. The sha256 and the size are computed while the bytes go to disk. docs/decisions.md says why
// not yazl or fflate.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { crc32, createDeflateRaw, deflateRaw } from 'node:zlib';
import { compareUtf8, type SelectedFile } from './files.js';

/** Extensions stored as they are: deflating them again only costs time. */
export const STORED_EXTENSIONS = ['png', 'jpg', 'jpeg', 'webp', 'gif', 'zip', 'gz', 'bz2', 'xz', '7z', 'mp4', 'webm', 'safetensors', 'ckpt', 'pt', 'bin'];
const STORED = new Set(STORED_EXTENSIONS);

export const isStored = (path: string) => {
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') && STORED.has(path.slice(dot + 1).toLowerCase());
};

/** Files up to this size are read whole and deflated ahead; larger ones are streamed in their turn. */
const SMALL_FILE = 1024 * 1024;
/** Bytes of files read ahead and not yet written: what packing holds in memory, whatever the tree. */
const WINDOW_BYTES = 16 * 1024 * 1024;
/** Files read ahead at most: enough to keep the cores busy, few enough not to flood the thread pool. */
const AHEAD_FILES = 64;
/** Output is written in blocks of about this size. */
const WRITE_BLOCK = 1024 * 1024;
/** Beyond these the zip format needs Zip64 records, which this writer does not write. */
const ZIP32_MAX = 0xffffffff;
const ZIP32_ENTRIES = 0xffff;

const deflateRawAsync = promisify(deflateRaw);

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

export interface ArchiveOptions {
  /** Compressed size limit in bytes. */
  maxSize?: number;
  /** Files deflated at once (default: the cores). The archive is the same for any number. */
  workers?: number;
  /** Called as the archive grows, with its bytes written so far. */
  onProgress?: (archiveBytes: number) => void;
}

/** A file read, checksummed and (unless stored) deflated, ready to be written. */
interface Prepared {
  crc: number;
  method: 0 | 8;
  data: Buffer;
}

/** What the central directory needs of an entry written. */
interface Written {
  name: Buffer;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  mode: number;
  offset: number;
}

const UTF8_NAMES = 0x0800;
const DATA_DESCRIPTOR = 0x0008;
const VERSION_NEEDED = 20; // 2.0: deflate
const VERSION_MADE_BY = (3 << 8) | 20; // Unix, 2.0: the high half of the external attributes is a mode
const DOS_TIME = 0; // 00:00:00
const DOS_DATE = (1 << 5) | 1; // 1980-01-01

/** Little-endian fields of 2 or 4 bytes, in order: the zip format's records. */
function record(fields: [2 | 4, number][], name?: Buffer): Buffer {
  const buffer = Buffer.alloc(fields.reduce((sum, [bytes]) => sum + bytes, 0));
  let at = 0;
  for (const [bytes, value] of fields) at = bytes === 2 ? buffer.writeUInt16LE(value, at) : buffer.writeUInt32LE(value, at);
  return name ? Buffer.concat([buffer, name]) : buffer;
}

function localHeader(name: Buffer, flags: number, method: number, crc: number, compressedSize: number, size: number): Buffer {
  return record(
    [[4, 0x04034b50], [2, VERSION_NEEDED], [2, flags], [2, method], [2, DOS_TIME], [2, DOS_DATE], [4, crc], [4, compressedSize], [4, size],
      [2, name.length], [2, 0 /* no extra fields */]],
    name,
  );
}

const dataDescriptor = (crc: number, compressedSize: number, size: number) => record([[4, 0x08074b50], [4, crc], [4, compressedSize], [4, size]]);

function centralHeader(entry: Written): Buffer {
  return record(
    [[4, 0x02014b50], [2, VERSION_MADE_BY], [2, VERSION_NEEDED], [2, entry.flags], [2, entry.method], [2, DOS_TIME], [2, DOS_DATE],
      [4, entry.crc], [4, entry.compressedSize], [4, entry.size], [2, entry.name.length],
      [2, 0], [2, 0], [2, 0], [2, 0], // extra, comment, disk number, internal attributes
      [4, ((0o100000 | entry.mode) << 16) >>> 0], [4, entry.offset]],
    entry.name,
  );
}

const endOfCentralDirectory = (entries: number, size: number, offset: number) =>
  record([[4, 0x06054b50], [2, 0], [2, 0], [2, entries], [2, entries], [4, size], [4, offset], [2, 0]]);

/** Reads a small file whole, takes its CRC, and deflates it unless stored or incompressible. */
async function prepare(file: SelectedFile, deflating: Limit): Promise<Prepared> {
  const data = await readFile(file.abs);
  if (data.length !== file.size) throw new FileChangedError(file.path);
  const crc = crc32(data);
  if (isStored(file.path) || data.length === 0) return { crc, method: 0, data };
  const deflated = await deflating(() => deflateRawAsync(data));
  return deflated.length < data.length ? { crc, method: 8, data: deflated } : { crc, method: 0, data };
}

type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/** Runs at most `count` tasks at once, the others waiting in order. */
function limit(count: number): Limit {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= count) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** The archive file: counts, hashes and buffers what is written, and enforces the size limit. */
class Output {
  private readonly hash = createHash('sha256');
  private blocks: Buffer[] = [];
  private buffered = 0;
  offset = 0;

  constructor(
    private readonly handle: FileHandle,
    private readonly maxSize: number,
    private readonly tooLarge: () => Error,
    private readonly onProgress?: (archiveBytes: number) => void,
  ) {}

  async write(buffer: Buffer): Promise<void> {
    this.offset += buffer.length;
    if (this.offset > this.maxSize) throw this.tooLarge();
    this.hash.update(buffer);
    this.blocks.push(buffer);
    this.buffered += buffer.length;
    if (this.buffered >= WRITE_BLOCK) await this.flush();
  }

  async flush(): Promise<void> {
    const blocks = this.blocks;
    this.blocks = [];
    this.buffered = 0;
    if (blocks.length) await this.handle.writev(blocks);
    this.onProgress?.(this.offset);
  }

  sha256(): string {
    return this.hash.digest('hex');
  }
}

/** Streams a large file in its turn: CRC and sizes go into a data descriptor after the data. */
async function streamEntry(out: Output, file: SelectedFile, name: Buffer): Promise<Written> {
  const method = isStored(file.path) ? 0 : 8;
  const offset = out.offset;
  await out.write(localHeader(name, UTF8_NAMES | DATA_DESCRIPTOR, method, 0, 0, 0));
  let crc = 0;
  let size = 0;
  let compressedSize = 0;
  const source = createReadStream(file.abs, { highWaterMark: WRITE_BLOCK });
  async function* checksummed(chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      crc = crc32(chunk, crc);
      size += chunk.length;
      yield chunk;
    }
  }
  async function sink(chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      compressedSize += chunk.length;
      await out.write(chunk);
    }
  }
  if (method === 8) await pipeline(source, checksummed, createDeflateRaw(), sink);
  else await pipeline(source, checksummed, sink);
  if (size !== file.size) throw new FileChangedError(file.path);
  await out.write(dataDescriptor(crc, compressedSize, size));
  return { name, flags: UTF8_NAMES | DATA_DESCRIPTOR, method, crc, compressedSize, size, mode: file.mode, offset };
}

/** Writes `files` (any order) into a zip at `outPath`. On failure the partial file is removed. */
export async function writeArchive(files: SelectedFile[], outPath: string, options: ArchiveOptions = {}): Promise<ArchiveResult> {
  const sorted = [...files].sort((a, b) => compareUtf8(a.path, b.path));
  if (sorted.length > ZIP32_ENTRIES) throw new Error(`an archive holds at most ${ZIP32_ENTRIES} files; this one would hold ${sorted.length}`);
  const maxSize = Math.min(options.maxSize ?? Infinity, ZIP32_MAX);
  const deflating = limit(Math.max(1, options.workers ?? availableParallelism()));
  const handle = await open(outPath, 'w');
  const out = new Output(handle, maxSize, () =>
    options.maxSize !== undefined && maxSize === options.maxSize
      ? new ArchiveTooLargeError(maxSize, largestFiles(sorted))
      : new Error('the archive would pass 4 GiB, beyond what this zip writer writes'),
    options.onProgress,
  );

  // Small files are prepared ahead of the one being written, within WINDOW_BYTES; each promise is
  // awaited in order (its failure too), so the bytes never depend on which finishes first.
  const ahead: { file: SelectedFile; ready?: Promise<Prepared> }[] = [];
  let aheadBytes = 0;
  let next = 0;
  const readAhead = () => {
    while (next < sorted.length && (ahead.length === 0 || (ahead.length < AHEAD_FILES && aheadBytes + Math.min(sorted[next].size, SMALL_FILE) <= WINDOW_BYTES))) {
      const file = sorted[next++];
      if (file.size > SMALL_FILE) {
        ahead.push({ file });
        continue;
      }
      const ready = prepare(file, deflating);
      ready.catch(() => {}); // reported when its turn comes
      ahead.push({ file, ready });
      aheadBytes += file.size;
    }
  };

  try {
    const written: Written[] = [];
    for (readAhead(); ahead.length; readAhead()) {
      const { file, ready } = ahead.shift()!;
      const name = Buffer.from(file.path, 'utf8');
      if (!ready) {
        written.push(await streamEntry(out, file, name));
        continue;
      }
      const prepared = await ready;
      aheadBytes -= file.size;
      const offset = out.offset;
      await out.write(localHeader(name, UTF8_NAMES, prepared.method, prepared.crc, prepared.data.length, file.size));
      await out.write(prepared.data);
      written.push({ name, flags: UTF8_NAMES, method: prepared.method, crc: prepared.crc, compressedSize: prepared.data.length, size: file.size, mode: file.mode, offset });
    }
    const centralStart = out.offset;
    for (const entry of written) await out.write(centralHeader(entry));
    await out.write(endOfCentralDirectory(written.length, out.offset - centralStart, centralStart));
    await out.flush();
    await handle.close();
  } catch (error) {
    await Promise.allSettled(ahead.map((item) => item.ready));
    await handle.close().catch(() => {});
    await rm(outPath, { force: true });
    throw error;
  }
  return {
    path: outPath,
    size: out.offset,
    sha256: out.sha256(),
    files: sorted.length,
    unpackedSize: sorted.reduce((sum, f) => sum + f.size, 0),
  };
}

/** The ten largest files, largest first (ties by name). */
export function largestFiles(files: SelectedFile[], count = 10): SelectedFile[] {
  return [...files].sort((a, b) => b.size - a.size || compareUtf8(a.path, b.path)).slice(0, count);
}
