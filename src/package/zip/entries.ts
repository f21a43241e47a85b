// The zip records this writer writes, the output that counts and hashes them, and the streamed entry.
import { createHash } from 'node:crypto';
import { type FileHandle, open } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { crc32, createDeflateRaw } from 'node:zlib';
import { DEFLATE_LEVEL, isStored } from '../deflate.js';
import type { SelectedFile } from '../files.js';

/** Output is written in blocks of about this size. */
export const WRITE_BLOCK = 1024 * 1024;

/** A file changed size between listing and packing. */
export class FileChangedError extends Error {
  constructor(readonly file: string) {
    super(`${file} changed while it was being packed; pack again`);
    this.name = 'FileChangedError';
  }
}

export interface Written {
  name: Buffer;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  mode: number;
  offset: number;
}

export const UTF8_NAMES = 0x0800;
const DATA_DESCRIPTOR = 0x0008;
const VERSION_NEEDED = 20; // 2.0: deflate
const VERSION_MADE_BY = (3 << 8) | 20; // Unix, 2.0: the high half of the external attributes is a mode
const DOS_TIME = 0; // 00:00:00
const DOS_DATE = (1 << 5) | 1; // 1980-01-01

/** Little-endian fields of 2 or 4 bytes, in order: the zip format's records. */
function record(fields: [2 | 4, number][], name?: Buffer): Buffer {
  let size = name?.length ?? 0;
  for (const [bytes] of fields) size += bytes;
  const buffer = Buffer.allocUnsafe(size); // every byte is written below
  let at = 0;
  for (const [bytes, value] of fields)
    at = bytes === 2 ? buffer.writeUInt16LE(value, at) : buffer.writeUInt32LE(value, at);
  name?.copy(buffer, at);
  return buffer;
}

export function localHeader(
  name: Buffer,
  flags: number,
  method: number,
  crc: number,
  compressedSize: number,
  size: number,
): Buffer {
  return record(
    [
      [4, 0x04034b50],
      [2, VERSION_NEEDED],
      [2, flags],
      [2, method],
      [2, DOS_TIME],
      [2, DOS_DATE],
      [4, crc],
      [4, compressedSize],
      [4, size],
      [2, name.length],
      [2, 0 /* no extra fields */],
    ],
    name,
  );
}

const dataDescriptor = (crc: number, compressedSize: number, size: number) =>
  record([
    [4, 0x08074b50],
    [4, crc],
    [4, compressedSize],
    [4, size],
  ]);

export function centralHeader(entry: Written): Buffer {
  return record(
    [
      [4, 0x02014b50],
      [2, VERSION_MADE_BY],
      [2, VERSION_NEEDED],
      [2, entry.flags],
      [2, entry.method],
      [2, DOS_TIME],
      [2, DOS_DATE],
      [4, entry.crc],
      [4, entry.compressedSize],
      [4, entry.size],
      [2, entry.name.length],
      [2, 0],
      [2, 0],
      [2, 0],
      [2, 0], // extra, comment, disk number, internal attributes
      [4, ((0o100000 | entry.mode) << 16) >>> 0],
      [4, entry.offset],
    ],
    entry.name,
  );
}

export const endOfCentralDirectory = (entries: number, size: number, offset: number) =>
  record([
    [4, 0x06054b50],
    [2, 0],
    [2, 0],
    [2, entries],
    [2, entries],
    [4, size],
    [4, offset],
    [2, 0],
  ]);

/** The archive file: counts, hashes and buffers what is written, and enforces the size limit. */
export class Output {
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

/**
 * Streams a large file in its turn, through `chunk` (one buffer read into again and again, so packing
 * leaves no garbage behind to raise its memory): CRC and sizes go into a data descriptor after the data.
 */
export async function streamEntry(out: Output, file: SelectedFile, name: Buffer, chunk: Buffer): Promise<Written> {
  const method = isStored(file.path) ? 0 : 8;
  const offset = out.offset;
  await out.write(localHeader(name, UTF8_NAMES | DATA_DESCRIPTOR, method, 0, 0, 0));
  const start = out.offset;
  let crc = 0;
  let size = 0;
  const deflate = method === 8 ? createDeflateRaw({ level: DEFLATE_LEVEL }) : undefined;
  const deflated: Buffer[] = [];
  deflate?.on('data', (part: Buffer) => deflated.push(part));
  const done = deflate && finished(deflate);
  done?.catch(() => {}); // awaited below
  const writeDeflated = async () => {
    for (const part of deflated.splice(0)) await out.write(part);
  };
  const handle = await open(file.abs, 'r');
  try {
    for (let read: number; (read = (await handle.read(chunk, 0, chunk.length, null)).bytesRead) > 0; ) {
      const part = chunk.subarray(0, read);
      crc = crc32(part, crc);
      size += read;
      if (deflate) {
        // the callback comes once zlib has consumed the chunk
        await new Promise<void>((resolve, reject) =>
          deflate.write(part, (error) => (error ? reject(error) : resolve())),
        );
        await writeDeflated();
      } else {
        await out.write(part);
        await out.flush();
      }
    }
    if (deflate) {
      deflate.end();
      await done;
      await writeDeflated();
    }
  } finally {
    deflate?.destroy();
    await handle.close();
  }
  if (size !== file.size) throw new FileChangedError(file.path);
  const compressedSize = out.offset - start;
  await out.write(dataDescriptor(crc, compressedSize, size));
  return { name, flags: UTF8_NAMES | DATA_DESCRIPTOR, method, crc, compressedSize, size, mode: file.mode, offset };
}

export async function writeCentralDirectory(out: Output, written: Written[]): Promise<void> {
  const centralStart = out.offset;
  for (const entry of written) await out.write(centralHeader(entry));
  await out.write(endOfCentralDirectory(written.length, out.offset - centralStart, centralStart));
}

/** Writes a small file a batch prepared: its local header, then its deflated (or stored) bytes. */
export async function writePrepared(
  out: Output,
  file: SelectedFile,
  name: Buffer,
  entry: { method: number; crc: number; length: number },
  data: Buffer,
): Promise<Written> {
  const offset = out.offset;
  await out.write(localHeader(name, UTF8_NAMES, entry.method, entry.crc, entry.length, file.size));
  await out.write(data);
  return {
    name,
    flags: UTF8_NAMES,
    method: entry.method,
    crc: entry.crc,
    compressedSize: entry.length,
    size: file.size,
    mode: file.mode,
    offset,
  };
}
