import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { crc32, inflateRaw, inflateRawSync } from 'node:zlib';
import { closeSync, fstatSync, openSync } from 'node:fs';
import yauzl from 'yauzl';
import { CachedZipReader } from './zip-reader.js';
import { createEntryNameChecker, entryNameProblem } from '../../contract/archive-names.js';
import { MAX_ARCHIVE_ENTRIES } from '../../contract/limits.js';
import { badRequest, HttpError } from '../errors.js';
import { languageOf } from '../../scan/languages.js';
import type { ArchiveEntry } from '../../scan/run.js';

export interface ZipSummary {
  entries: number;
  /** Entries the scanner reads (Python and JavaScript files), with where their data lies. */
  scannable: ArchiveEntry[];
  /** Bytes actually inflated, all entries together. */
  unpackedSize: number;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** The zip at `path`, read through CachedZipReader; the file is closed with the zip (or at once on failure). */
async function openZip(path: string): Promise<{ zip: yauzl.ZipFile; reader: CachedZipReader }> {
  const fd = openSync(path, 'r');
  try {
    const options = { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false };
    const reader = new CachedZipReader(fd);
    return { zip: await yauzl.fromRandomAccessReaderPromise(reader, fstatSync(fd).size, options), reader };
  } catch (error) {
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
 * Entries up to this size, compressed and expanded, are inflated on the event loop (a source file of
 * 12 KB takes ~40 µs): the round trip to the thread pool cost more than the inflate itself (41 such
 * entries: ~6 ms of waiting, measured). Other requests still get their turns: the reader fetches each
 * new 64 KiB block of the archive from the thread pool. Only entries that expand at most
 * INLINE_RATIO times (source code: 3–6) are inflated here, so one block of the archive costs the
 * event loop at most ~1 MiB of inflating, whatever an attacker packs into it.
 */
const INLINE_BYTES = 64 * 1024;
const INLINE_RATIO = 16;
const inflatesInline = (entry: yauzl.Entry) =>
  entry.compressedSize <= INLINE_BYTES && entry.uncompressedSize <= INLINE_BYTES && entry.uncompressedSize <= entry.compressedSize * INLINE_RATIO;

/** The bytes an entry inflates to, its data read whole (a small entry); null when it inflates to more than it declares. */
async function inflateWhole(reader: CachedZipReader, dataStart: number, entry: yauzl.Entry): Promise<Buffer | null> {
  const data = Buffer.allocUnsafe(entry.compressedSize);
  await new Promise<void>((resolve, reject) => reader.read(data, 0, data.length, dataStart, (error) => (error ? reject(error) : resolve())));
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

const entryError = (name: string, problem: string) => badRequest(`invalid archive: entry ${JSON.stringify(name)} ${problem}`);

/**
 * Checks an uploaded zip before it is accepted (DESIGN.md §3): every entry inflates with the right CRC
 * and size; names follow src/contract/archive-names.ts (no absolute, `..`, `.`, empty-segment,
 * drive-letter or backslash names, no duplicates, none that collide in case or Unicode normalisation),
 * no symlink or encrypted entries; the total expanded size stays within `maxUnpacked`, counted as bytes inflate (zip bombs
 * stop early). Entries are streamed, never buffered whole. Any problem is a 400 naming the entry.
 */
export async function validateZip(
  path: string,
  limits: { maxUnpacked: number; maxEntries?: number },
): Promise<ZipSummary> {
  const maxEntries = limits.maxEntries ?? MAX_ARCHIVE_ENTRIES;
  let zip: yauzl.ZipFile;
  let reader: CachedZipReader;
  try {
    // Names are decoded here (not by yauzl) so that each refusal can name its entry and say why.
    ({ zip, reader } = await openZip(path));
  } catch (error) {
    throw badRequest(`invalid archive: not a readable zip file (${(error as Error).message})`);
  }
  if (zip.entryCount > maxEntries) {
    zip.close();
    throw badRequest(`invalid archive: it holds ${zip.entryCount} entries, more than the limit of ${maxEntries}`);
  }
  const checkName = createEntryNameChecker();
  let entries = 0;
  const scannable: ArchiveEntry[] = [];
  let unpackedSize = 0;
  let current = '';
  let previous = '';
  try {
    for await (const entry of zip.eachEntry()) {
      entries++;
      const raw = entry.fileNameRaw;
      // The name other tools may use (the Unicode path extra field) and the raw one must both be safe.
      const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, true);
      const rawName = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, [], true);
      current = name;
      const problem = entryNameProblem(name) ?? entryNameProblem(rawName) ?? checkName(name);
      if (problem) throw entryError(name, problem);
      if (entry.isEncrypted() || entry.generalPurposeBitFlag & 0x40) throw entryError(name, 'is encrypted');
      if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) throw entryError(name, 'is a symbolic link');
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        throw entryError(name, `uses compression method ${entry.compressionMethod} (only stored and deflate are accepted)`);
      }
      if (unpackedSize + entry.uncompressedSize > limits.maxUnpacked) {
        throw badRequest(`invalid archive: it expands to more than the limit of ${limits.maxUnpacked} bytes (at entry ${JSON.stringify(name)})`);
      }

      // The local header must describe the same entry as the central directory.
      const local = await zip.readLocalFileHeaderPromise(entry);
      if (!local.fileName.equals(raw)) throw entryError(name, 'has a different name in its local header');
      if (local.generalPurposeBitFlag & 0x41) throw entryError(name, 'is encrypted');
      if (!name.endsWith('/') && languageOf(name)) {
        const { compressedSize, uncompressedSize: size } = entry;
        scannable.push({ path: name, start: local.fileDataStart, compressedSize, size, deflated: entry.compressionMethod === 8 });
      }

      // An empty stored entry has no data to read (a zip of many of them was the slow case).
      if (entry.compressedSize === 0 && entry.compressionMethod === 0) {
        if (entry.uncompressedSize !== 0) throw entryError(name, `inflates to 0 bytes, not the ${entry.uncompressedSize} it declares`);
        if (entry.crc32 !== 0) throw entryError(name, 'fails its CRC-32 check (the archive is corrupt)');
        previous = name;
        current = '';
        continue;
      }
      let crc = 0;
      let size = 0;
      if (entry.compressedSize <= WHOLE_ENTRY_BYTES && entry.uncompressedSize <= WHOLE_ENTRY_BYTES) {
        const data = await inflateWhole(reader, local.fileDataStart, entry);
        if (data === null) throw entryError(name, `inflates to more than the ${entry.uncompressedSize} bytes it declares`);
        size = data.length;
        unpackedSize += size;
        crc = crc32(data);
      } else {
        // (yauzl 3.4's openReadStreamLowLevelPromise calls the wrong method: use the callback form)
        const stream = await new Promise<Readable>((resolve, reject) =>
          zip.openReadStreamLowLevel(
            local.fileDataStart,
            entry.compressedSize,
            0,
            entry.compressedSize,
            entry.compressionMethod === 8,
            entry.uncompressedSize,
            (error, readStream) => (error ? reject(error) : resolve(readStream)),
          ),
        );
        await pipeline(
          stream,
          new Writable({
            write(chunk: Buffer, _encoding, callback) {
              size += chunk.length;
              unpackedSize += chunk.length;
              if (unpackedSize > limits.maxUnpacked) {
                return callback(badRequest(`invalid archive: it expands to more than the limit of ${limits.maxUnpacked} bytes (at entry ${JSON.stringify(name)})`));
              }
              crc = crc32(chunk, crc);
              callback();
            },
          }),
        );
      }
      if (size !== entry.uncompressedSize) throw entryError(name, `inflates to ${size} bytes, not the ${entry.uncompressedSize} it declares`);
      if (crc !== entry.crc32) throw entryError(name, 'fails its CRC-32 check (the archive is corrupt)');
      previous = name;
      current = '';
    }
  } catch (error) {
    if (error instanceof HttpError) throw error;
    const where = current ? ` at entry ${JSON.stringify(current)}` : previous ? ` after entry ${JSON.stringify(previous)}` : '';
    throw badRequest(`invalid archive: ${(error as Error).message}${where}`);
  } finally {
    zip.close();
  }
  return { entries, scannable, unpackedSize };
}
