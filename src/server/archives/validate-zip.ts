import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { crc32, inflateRaw, inflateRawSync } from 'node:zlib';
import { closeSync, fstatSync, openSync, read } from 'node:fs';
import yauzl from 'yauzl';
import { CachedZipReader } from './zip-reader.js';
import { createEntryNameChecker, entryNameProblem } from '../../contract/archive-names.js';
import { MAX_ARCHIVE_ENTRIES, UNPACKED_RATIO, entryRatioAllowed, unpackedBound } from '../../contract/limits.js';
import { badRequest, HttpError } from '../errors.js';
import { yieldEvery } from '../turns.js';
import { isCompiledPython, isZip, languageOf } from '../../scan/languages.js';
import type { ArchiveEntry } from '../../scan/run.js';
import { SCAN_MAX_FILE_BYTES } from '../../shared/scan.js';

export interface ZipSummary {
  entries: number;
  /**
   * Entries the scanner reads (Python and JavaScript files), with where their data lies; those checked
   * from one buffer carry their inflated bytes (`data`) while the upload's share of its server's budget allows.
   */
  scannable: ArchiveEntry[];
  /**
   * The other files small enough to scan, with where their data lies (never kept): the scan reads one as
   * Python when a scanned file runs it as code (code-in-data: SourceFileLoader on a .txt).
   */
  loadable: ArchiveEntry[];
  /** Bytes actually inflated, all entries together. */
  unpackedSize: number;
  /** The first entry of compiled Python (isCompiledPython), which the scan cannot read. */
  compiled?: string;
  /** Gives the memory the kept `data` holds back to the budget; call it once the scan is done with them. */
  release(): void;
}

const MiB = 1024 * 1024;

/**
 * Bytes held in memory by uploads being received, checked and scanned, all of them together; past it an
 * upload takes small buffers and the file path. Outside it each upload holds only small pieces: at most
 * ~0.23 MiB of receive buffers (storage.ts) and, while it is checked, two 64 KiB blocks of the reader
 * and one entry of at most 256 KiB with its inflated bytes, or 64 KiB pieces of a larger one.
 */
export class MemoryBudget {
  /** Bytes taken and not yet given back. */
  held = 0;
  constructor(readonly max: number) {}
  take(bytes: number): boolean {
    if (this.held + bytes > this.max) return false;
    this.held += bytes;
    return true;
  }
  give(bytes: number): void {
    this.held -= bytes;
  }
}

/** A server's budget unless `uploadMemory` says otherwise: 64 MiB, e.g. 8 archives of 8 MiB checked at once. */
export const UPLOAD_MEMORY_MAX = 64 * MiB;

/**
 * An archive up to this size is read whole with one read (from the page cache: it was just written)
 * and checked from memory: its local headers and small entries no longer wait for the thread pool
 * one 64 KiB block at a time (that waiting was most of a small archive's check).
 */
const WHOLE_ARCHIVE_BYTES = 8 * MiB;
/** The inflated bytes of scannable entries kept for the scan, per upload: the scan then reads and inflates none of them again. */
const KEEP_BYTES = 4 * MiB;

/**
 * The check works on the event loop in steps of bounded size (an inflate of at most 64 KiB, a CRC of
 * at most 1 MiB, one entry's headers) and gives other requests a turn once this long has passed since
 * their last one: an archive checked from memory never waits for I/O, so nothing else would.
 */
const YIELD_EVERY_MS = 1;
const CRC_STEP = MiB;

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** `length` bytes of `fd` from `position`, read on the thread pool. */
function readAt(fd: number, length: number, position: number): Promise<Buffer> {
  const data = Buffer.allocUnsafe(length);
  return new Promise((resolve, reject) => {
    const next = (filled: number) =>
      read(fd, data, filled, length - filled, position + filled, (error, bytesRead) => {
        if (error) return reject(error);
        if (bytesRead === 0) return reject(new Error(`unexpected end of file at byte ${position + filled}`));
        if (filled + bytesRead < length) next(filled + bytesRead);
        else resolve(data);
      });
    next(0);
  });
}

/**
 * The zip at `path`, read through CachedZipReader (whole, when it is small and the budget allows: then
 * `held` is its size, to give back); the file is closed with the zip (or at once on failure).
 */
async function openZip(
  path: string,
  memory: MemoryBudget,
): Promise<{ zip: yauzl.ZipFile; reader: CachedZipReader; size: number; whole?: Buffer }> {
  const fd = openSync(path, 'r');
  let whole: Buffer | undefined;
  try {
    const size = fstatSync(fd).size;
    if (size > 0 && size <= WHOLE_ARCHIVE_BYTES && memory.take(size)) {
      try {
        whole = await readAt(fd, size, 0);
      } catch (error) {
        memory.give(size);
        throw error;
      }
    }
    const options = { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false };
    const reader = new CachedZipReader(fd, whole);
    return { zip: await yauzl.fromRandomAccessReaderPromise(reader, size, options), reader, size, whole };
  } catch (error) {
    if (whole) memory.give(whole.length);
    closeSync(fd);
    throw error;
  }
}

const inflateRawAsync = promisify(inflateRaw);

/**
 * Entries up to this size, compressed and expanded, are checked from one buffer: read through the
 * reader's cache (a small entry usually lies in the block its local header was read with) and
 * inflated in one call on the thread pool, instead of a stream pipeline each (most of the time of a
 * zip of source files went to setting those up). Larger entries are streamed, so memory stays flat.
 */
const WHOLE_ENTRY_BYTES = 256 * 1024;

/**
 * Entries up to this size, compressed and expanded, are inflated on the event loop (a source file
 * inflates in microseconds): the round trip to the thread pool costs more than the inflate itself,
 * once per entry. Other requests still get their turns: the reader fetches each new 64 KiB block of
 * the archive from the thread pool. Only entries that expand at most
 * INLINE_RATIO times (source code: 3–6) are inflated here, so one block of the archive costs the
 * event loop at most ~1 MiB of inflating, whatever an attacker packs into it.
 */
const INLINE_BYTES = 64 * 1024;
const INLINE_RATIO = 16;
const inflatesInline = (entry: yauzl.Entry) =>
  entry.compressedSize <= INLINE_BYTES &&
  entry.uncompressedSize <= INLINE_BYTES &&
  entry.uncompressedSize <= entry.compressedSize * INLINE_RATIO;

/** The bytes an entry inflates to, its data read whole (a small entry); null when it inflates to more than it declares. */
async function inflateWhole(reader: CachedZipReader, dataStart: number, entry: yauzl.Entry): Promise<Buffer | null> {
  const data = Buffer.allocUnsafe(entry.compressedSize);
  await new Promise<void>((resolve, reject) =>
    reader.read(data, 0, data.length, dataStart, (error) => (error ? reject(error) : resolve())),
  );
  if (entry.compressionMethod === 0) return data;
  // One byte over the declared size is enough to know it lies (and bounds the memory of a bomb).
  const options = { maxOutputLength: entry.uncompressedSize + 1 };
  try {
    return inflatesInline(entry) ? inflateRawSync(data, options) : await inflateRawAsync(data, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return null;
    throw error;
  }
}

const entryError = (name: string, problem: string) =>
  badRequest(`invalid archive: entry ${JSON.stringify(name)} ${problem}`);

/** The CRC-32 of `data`, taken in steps of CRC_STEP with turns for other requests between them. */
async function crc32InSteps(data: Buffer, yieldIfDue: () => Promise<void>): Promise<number> {
  let crc = 0;
  for (let at = 0; at < data.length; at += CRC_STEP) {
    crc = crc32(data.subarray(at, at + CRC_STEP), crc);
    await yieldIfDue();
  }
  return crc;
}

/**
 * Checks an uploaded zip before it is accepted (DESIGN.md §3): every entry inflates with the right CRC
 * and size; names follow src/contract/archive-names.ts (no absolute, `..`, `.`, empty-segment,
 * drive-letter or backslash names, no duplicates, none that collide in case or Unicode normalisation),
 * no symlink or encrypted entries; the total expanded size stays within `maxUnpacked`, counted as bytes inflate (zip bombs
 * stop early). Large entries are streamed, never buffered whole. Any problem is a 400 naming the entry.
 */
export async function validateZip(
  path: string,
  limits: { maxUnpacked: number; maxEntries?: number; memory: MemoryBudget },
): Promise<ZipSummary> {
  const check = await openForCheck(path, limits);
  const { zip, memory, whole } = check;
  const checkName = createEntryNameChecker();
  let entries = 0;
  let files = 0;
  let compiled: string | undefined;
  let current = '';
  let previous = '';
  const release = () => {
    memory.give(check.kept);
    check.kept = 0;
  };
  try {
    for await (const entry of zip.eachEntry()) {
      await check.yieldIfDue();
      entries++;
      // The name other tools may use (the Unicode path extra field) and the raw one must both be safe.
      const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
      const rawName = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, [], true);
      current = name;
      const problem = entryNameProblem(name) ?? entryNameProblem(rawName) ?? checkName(name);
      if (problem) throw entryError(name, problem);
      if (!name.endsWith('/')) files++;
      if (compiled === undefined && isCompiledPython(name)) compiled = name;
      await checkEntry(check, entry, name);
      previous = name;
      current = '';
    }
    // Nothing to install: the CLI never packs such an archive ("nothing to pack").
    if (files === 0)
      throw badRequest(
        'invalid archive: it holds no files (directories at most); a node archive holds at least its code',
      );
  } catch (error) {
    release();
    if (error instanceof HttpError) throw error;
    const where = current
      ? ` at entry ${JSON.stringify(current)}`
      : previous
        ? ` after entry ${JSON.stringify(previous)}`
        : '';
    throw badRequest(`invalid archive: ${(error as Error).message}${where}`);
  } finally {
    zip.close();
    if (whole) memory.give(whole.length);
  }
  return {
    entries,
    scannable: check.scannable,
    loadable: check.loadable,
    unpackedSize: check.unpackedSize,
    compiled,
    release,
  };
}

/** One archive being checked: the open zip, its limits, and what the entries so far added up to. */
interface ZipCheck {
  zip: yauzl.ZipFile;
  reader: CachedZipReader;
  /** The archive's bytes when it was read whole. */
  whole: Buffer | undefined;
  memory: MemoryBudget;
  maxUnpacked: number;
  overLimit: (name: string) => HttpError;
  yieldIfDue: () => Promise<void>;
  unpackedSize: number;
  scannable: ArchiveEntry[];
  loadable: ArchiveEntry[];
  /** What the kept `data` holds: the size of the memory behind each (zlib's output may be a view of a larger chunk). */
  kept: number;
}

/** Opens the archive and checks its entry count; the unpacked bound is known before anything is inflated. */
async function openForCheck(
  path: string,
  limits: { maxUnpacked: number; maxEntries?: number; memory: MemoryBudget },
): Promise<ZipCheck> {
  const maxEntries = limits.maxEntries ?? MAX_ARCHIVE_ENTRIES;
  const { memory } = limits;
  let opened: Awaited<ReturnType<typeof openZip>>;
  try {
    // Names are decoded here (not by yauzl) so that each refusal can name its entry and say why.
    opened = await openZip(path, memory);
  } catch (error) {
    throw badRequest(`invalid archive: not a readable zip file (${(error as Error).message})`);
  }
  const { zip, reader, size: archiveBytes, whole } = opened;
  if (zip.entryCount > maxEntries) {
    zip.close();
    if (whole) memory.give(whole.length);
    throw badRequest(`invalid archive: it holds ${zip.entryCount} entries, more than the limit of ${maxEntries}`);
  }
  // Known before anything is inflated: an entry that would pass it is refused before it is inflated.
  const maxUnpacked = unpackedBound(archiveBytes, limits.maxUnpacked);
  const overLimit = (name: string) =>
    badRequest(
      maxUnpacked < limits.maxUnpacked
        ? `invalid archive: it expands to more than ${maxUnpacked} bytes, ${UNPACKED_RATIO.total} times its ${archiveBytes} bytes (at entry ${JSON.stringify(name)})`
        : `invalid archive: it expands to more than the limit of ${maxUnpacked} bytes (at entry ${JSON.stringify(name)})`,
    );
  const yieldIfDue = yieldEvery(YIELD_EVERY_MS);
  return {
    zip,
    reader,
    whole,
    memory,
    maxUnpacked,
    overLimit,
    yieldIfDue,
    unpackedSize: 0,
    scannable: [],
    loadable: [],
    kept: 0,
  };
}

/** Checks one entry whose name is safe: its flags and sizes, its local header, then its bytes and CRC. */
async function checkEntry(check: ZipCheck, entry: yauzl.Entry, name: string): Promise<void> {
  if (entry.isEncrypted() || entry.generalPurposeBitFlag & 0x40) throw entryError(name, 'is encrypted');
  if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) throw entryError(name, 'is a symbolic link');
  if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    throw entryError(name, `uses compression method ${entry.compressionMethod} (only stored and deflate are accepted)`);
  }
  if (!entryRatioAllowed(entry.compressedSize, entry.uncompressedSize)) {
    throw entryError(
      name,
      `expands to ${entry.uncompressedSize} bytes from ${entry.compressedSize}, more than ${UNPACKED_RATIO.entry} times its packed size`,
    );
  }
  if (check.unpackedSize + entry.uncompressedSize > check.maxUnpacked) throw check.overLimit(name);

  // The local header must describe the same entry as the central directory.
  const local = await check.zip.readLocalFileHeaderPromise(entry);
  if (!local.fileName.equals(entry.fileNameRaw)) throw entryError(name, 'has a different name in its local header');
  if (local.generalPurposeBitFlag & 0x41) throw entryError(name, 'is encrypted');
  if (local.compressionMethod !== entry.compressionMethod) {
    throw entryError(
      name,
      `uses compression method ${local.compressionMethod} in its local header but ${entry.compressionMethod} in the central directory`,
    );
  }
  let scanned: ArchiveEntry | undefined;
  if (!name.endsWith('/') && languageOf(name)) {
    const { compressedSize, uncompressedSize: size } = entry;
    scanned = { path: name, start: local.fileDataStart, compressedSize, size, deflated: entry.compressionMethod === 8 };
    check.scannable.push(scanned);
  } else if (!name.endsWith('/') && (entry.uncompressedSize <= SCAN_MAX_FILE_BYTES || isZip(name))) {
    // a zip of any size: one put on sys.path is read inside, or reported as over the bound (nested-zip.ts)
    const { compressedSize, uncompressedSize: size } = entry;
    check.loadable.push({
      path: name,
      start: local.fileDataStart,
      compressedSize,
      size,
      deflated: entry.compressionMethod === 8,
    });
  }

  // An empty stored entry has no data to read (a zip of many of them was the slow case).
  if (entry.compressedSize === 0 && entry.compressionMethod === 0) {
    if (entry.uncompressedSize !== 0)
      throw entryError(name, `inflates to 0 bytes, not the ${entry.uncompressedSize} it declares`);
    if (entry.crc32 !== 0) throw entryError(name, 'fails its CRC-32 check (the archive is corrupt)');
    return;
  }
  const { crc, size } = await inflateEntry(check, entry, local.fileDataStart, name, scanned);
  if (size !== entry.uncompressedSize)
    throw entryError(name, `inflates to ${size} bytes, not the ${entry.uncompressedSize} it declares`);
  if (crc !== entry.crc32) throw entryError(name, 'fails its CRC-32 check (the archive is corrupt)');
}

/** Inflates an entry's data, counting it against the unpacked bound: its CRC-32 and size. */
async function inflateEntry(
  check: ZipCheck,
  entry: yauzl.Entry,
  start: number,
  name: string,
  scanned: ArchiveEntry | undefined,
): Promise<{ crc: number; size: number }> {
  const { whole } = check;
  if (whole && entry.compressionMethod === 0 && entry.compressedSize > WHOLE_ENTRY_BYTES) {
    // A large stored entry of an archive held whole: its bytes are there already (yauzl checked that
    // a stored entry's two sizes agree, and the sum of sizes against maxUnpacked was checked above).
    const end = start + entry.compressedSize;
    if (end > whole.length) throw new Error(`unexpected end of file at byte ${whole.length}`);
    check.unpackedSize += entry.compressedSize;
    return { crc: await crc32InSteps(whole.subarray(start, end), check.yieldIfDue), size: entry.compressedSize };
  }
  if (entry.compressedSize <= WHOLE_ENTRY_BYTES && entry.uncompressedSize <= WHOLE_ENTRY_BYTES) {
    const data = await inflateWhole(check.reader, start, entry);
    if (data === null) throw entryError(name, `inflates to more than the ${entry.uncompressedSize} bytes it declares`);
    check.unpackedSize += data.length;
    const crc = crc32(data);
    // Kept for the scan only once it is known good (the checks after this), within the upload's share.
    const backing = data.buffer.byteLength;
    if (
      scanned &&
      data.length === entry.uncompressedSize &&
      crc === entry.crc32 &&
      check.kept + backing <= KEEP_BYTES &&
      check.memory.take(backing)
    ) {
      scanned.data = data;
      check.kept += backing;
    }
    return { crc, size: data.length };
  }
  // (yauzl 3.4's openReadStreamLowLevelPromise calls the wrong method: use the callback form)
  const stream = await new Promise<Readable>((resolve, reject) =>
    check.zip.openReadStreamLowLevel(
      start,
      entry.compressedSize,
      0,
      entry.compressedSize,
      entry.compressionMethod === 8,
      entry.uncompressedSize,
      (error, readStream) => (error ? reject(error) : resolve(readStream)),
    ),
  );
  let crc = 0;
  let size = 0;
  await pipeline(
    stream,
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        check.unpackedSize += chunk.length;
        if (check.unpackedSize > check.maxUnpacked) return callback(check.overLimit(name));
        crc = crc32(chunk, crc);
        callback();
      },
    }),
  );
  return { crc, size };
}
