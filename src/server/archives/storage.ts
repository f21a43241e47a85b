import { createHash, randomBytes } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { access, link, mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { badRequest, tooLarge } from '../errors.js';
import { makeDirs } from '../../shared/make-dirs.js';
import { listLocalObjects } from './list-local.js';
import type { MemoryBudget } from './validate-zip.js';

/** An upload written whole to a temporary file, not yet in place. */
export interface ReceivedArchive {
  tempPath: string;
  /** Lowercase hex SHA-256 of the bytes received. */
  sha256: string;
  size: number;
  /**
   * Settles once the file is on disk (fsync). It runs while the archive is checked and scanned; a
   * commit waits for it, so nothing goes into place before it is durable. Never rejects unhandled.
   */
  synced: Promise<void>;
}

/**
 * The archive storage answered, but not as a store does (a PUT answered as stored that stored nothing):
 * the registry's fault, not the client's, so the request is answered 503 and may be retried.
 */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
  /** What the operator should check, for the log line; a bucket's checks when not given. */
  constructor(
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}

/**
 * A commit found an object at its key holding other bytes: archives are written once (DESIGN.md §16),
 * so nothing was replaced. `sha256` is the existing object's, when known.
 */
export class ArchiveExistsError extends Error {
  override name = 'ArchiveExistsError';
  constructor(
    readonly key: string,
    readonly sha256: string | undefined,
  ) {
    super(
      `an archive object is already stored at ${key}${sha256 ? ` (sha256 ${sha256})` : ''}: archives are written once`,
    );
  }
}

/**
 * Where archives live. The local dir is the embedded default; an object store can implement the same
 * interface when one process is not enough (DESIGN.md §3). Keys look like
 * `{publisherId}/{nodeId}/{version}/node.zip`.
 */
export interface ArchiveStorage {
  /**
   * Streams `body` to a temporary file with backpressure, hashing as it goes; never holds it in memory.
   * Past `maxBytes` it stops reading (the body is unpiped and paused, not destroyed, so an HTTP caller
   * can still answer 413), removes the temporary file and rejects with a 413 HttpError. Its buffers
   * count against `memory` (the server's, or a restore's) while it receives. When `signal` aborts, it stops
   * the same way and rejects with the signal's reason (an upload too slow: its 408).
   */
  receive(body: Readable, maxBytes: number, memory: MemoryBudget, signal?: AbortSignal): Promise<ReceivedArchive>;
  /**
   * Puts a received archive at `key` atomically and durably (on disk when it resolves), once: an object
   * already there with the same SHA-256 is kept (a retry), one with other bytes is never replaced
   * (ArchiveExistsError). Who may store a version's archive is decided by the store beforehand
   * (`claimArchive`), not here: that decision and the file then stay in agreement across a crash (a
   * claim left behind is rolled back at start).
   */
  commit(received: ReceivedArchive, key: string): Promise<void>;
  /** Stores small bytes at `key` unless something is there; false when something was (write once). */
  writeOnce(key: string, data: Buffer, contentType: string): Promise<boolean>;
  /** Where `key` is, for an operator: a file path or an s3:// URL. */
  where(key: string): string;
  /** The storage as `--storage` names it: its absolute dir, or s3://bucket/prefix (recorded in the data dir at start). */
  readonly location: string;
  /** Removes a received archive that will not be committed. */
  discard(received: ReceivedArchive): Promise<void>;
  /** Stores small bytes (a proxy result) at `key` whole, replacing whatever is there. */
  write(key: string, data: Buffer, contentType: string): Promise<void>;
  /** Removes the archive at `key`, if there is one. */
  remove(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** Every object stored, with its size and last change (for `nodereg admin gc`); never a temporary file. */
  list(): AsyncIterable<StoredObject>;
  /**
   * The archive at `key` as a stream, or undefined when there is none. With `range` (inclusive byte
   * offsets within the archive), only those bytes. `size` is always the whole archive's.
   */
  open(key: string, range?: ByteRange): Promise<OpenedArchive | undefined>;
  /** Removes temporary files left by a crash; called at start. */
  sweep(): Promise<void>;
  /**
   * Resolves while archives can be stored and served (for /readyz): the dir is there and may be
   * written (not its free space: a full disk still serves downloads), or the bucket answers.
   */
  ready(): Promise<void>;
  /** Lets go of connections and scratch files; called when the server closes. */
  close?(): void | Promise<void>;
}

export interface StoredObject {
  key: string;
  size: number;
  modified: Date;
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

export interface OpenedArchive {
  stream: Readable;
  /** The whole archive's size in bytes. */
  size: number;
}

/**
 * A file as a stream, or undefined when there is none. The file is opened before the stream exists, so
 * that a failure to open it (EMFILE) is an error of the request, not of a stream already answered; the
 * stream closes it when it ends, fails or is destroyed.
 */
export async function openFile(path: string, range?: ByteRange): Promise<OpenedArchive | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      await handle.close();
      return undefined;
    }
    return { stream: handle.createReadStream(range ? { start: range.start, end: range.end } : {}), size: stats.size };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/** Temporary files live inside the storage dir, so linking them into place never crosses a filesystem. */
const TEMP_DIR = '.tmp';

/** Refuses keys that could leave the storage dir. */
export function checkKey(key: string): void {
  const segments = key.split('/');
  if (
    key.includes('\\') ||
    key.includes('\0') ||
    segments.some((s) => s === '' || s === '.' || s === '..') ||
    segments[0] === TEMP_DIR
  ) {
    throw new Error(`invalid archive key: ${JSON.stringify(key)}`);
  }
}

/**
 * What receiving may hold between the socket and the file. With the streams' 16 KiB default, each 64
 * KiB the socket gave waited for its write on the thread pool before the next was read, so an upload
 * arrived no faster than its writes one by one, however fast the client sent; with room for 1 MiB the
 * writes go behind the reads, several chunks to one writev.
 */
const RECEIVE_BUFFER = 1024 * 1024;
/**
 * What receiving holds at most: the counter's two sides and the file stream's queue, each full to its
 * high-water mark and one more chunk of the socket (at most 64 KiB). With RECEIVE_BUFFER it is taken
 * from the upload budget; when the budget has no room, the streams keep their default 16 KiB mark and
 * hold at most ~0.23 MiB, outside it (a bound per upload, as the check's pieces in validate-zip.ts).
 */
const receiveHold = (buffer: number) => 3 * (buffer + 64 * 1024);

/**
 * Streams `body` into a new file in `tempDir` with backpressure, hashing as it goes, and starts its
 * sync (`synced`, not awaited before the check, so that the two overlap); the receive() of every
 * storage (the S3 one spools here too: a zip is checked from its end, so it needs a file to seek in
 * before it goes to the bucket).
 */
export async function receiveToFile(
  body: Readable,
  maxBytes: number,
  tempDir: string,
  memory: MemoryBudget,
  signal?: AbortSignal,
): Promise<ReceivedArchive> {
  const held = memory.take(receiveHold(RECEIVE_BUFFER)) ? receiveHold(RECEIVE_BUFFER) : 0;
  const buffer = held ? RECEIVE_BUFFER : undefined;
  const tempPath = join(tempDir, `${randomBytes(12).toString('hex')}.part`);
  const hash = createHash('sha256');
  let size = 0;
  const counter = new Transform({
    highWaterMark: buffer,
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxBytes) return callback(tooLarge(`the archive is over the limit of ${maxBytes} bytes`));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  // The body is piped (not put in the pipeline) so that an overflow leaves it open for a 413 answer.
  // A body cut short (the client went away, or sent too slowly) is the client's doing: a 400, not a 500.
  const cut = (why = 'the connection closed or timed out') =>
    badRequest(`the upload ended before the whole body arrived (${why})`);
  const onBodyError = (error: Error) => counter.destroy(cut(error.message));
  const onBodyClose = () => {
    if (!body.readableEnded) counter.destroy(cut());
  };
  const onAbort = () => counter.destroy(signal!.reason as Error);
  body.once('error', onBodyError);
  body.once('close', onBodyClose);
  signal?.addEventListener('abort', onAbort, { once: true });
  body.pipe(counter);
  const file = createWriteStream(tempPath, { flags: 'wx', mode: 0o600, highWaterMark: buffer });
  try {
    await pipeline(counter, file);
  } catch (error) {
    body.unpipe(counter);
    body.pause();
    // A stream cut before its open finished still makes the file: remove it once the stream is closed.
    if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
    await rm(tempPath, { force: true });
    throw error;
  } finally {
    body.off('error', onBodyError);
    body.off('close', onBodyClose);
    signal?.removeEventListener('abort', onAbort);
    memory.give(held);
  }
  // Durable before it can be linked into place (commit waits for it).
  const synced = syncPath(tempPath);
  synced.catch(() => {});
  return { tempPath, sha256: hash.digest('hex'), size, synced };
}

/** Puts a file, or a directory's entries (a rename or a new directory in it), on disk. */
async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The SHA-256 of a file, as lowercase hex. */
async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(path, 'r');
  try {
    for await (const chunk of handle.createReadStream()) hash.update(chunk as Buffer);
  } finally {
    await handle.close().catch(() => {});
  }
  return hash.digest('hex');
}

/**
 * Makes `dir` and its missing parents. A new directory, like a rename, is an entry of its parent: on
 * disk only once the parent is synced. Until then a power loss could take the archive while the store says it is there.
 */
async function makeSyncedDirs(dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true });
  if (!created) return;
  for (let made = dir; ; made = dirname(made)) {
    await syncPath(dirname(made));
    if (made === created) break;
  }
}

export function createLocalArchiveStorage(dir: string): ArchiveStorage {
  const tempDir = join(dir, TEMP_DIR);
  makeDirs(tempDir);
  const pathOf = (key: string) => {
    checkKey(key);
    return join(dir, ...key.split('/'));
  };

  async function discard(received: ReceivedArchive): Promise<void> {
    await rm(received.tempPath, { force: true });
  }

  return {
    receive: (body, maxBytes, memory, signal) => receiveToFile(body, maxBytes, tempDir, memory, signal),

    async commit(received, key) {
      const target = pathOf(key);
      const parent = dirname(target);
      await received.synced;
      await makeSyncedDirs(parent);
      // link() never replaces (archives are written once): EEXIST when a file is there.
      try {
        await link(received.tempPath, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const existing = await fileSha256(target);
        if (existing !== received.sha256) throw new ArchiveExistsError(key, existing);
      }
      await rm(received.tempPath, { force: true });
      await syncPath(parent);
    },

    discard,

    async writeOnce(key, data) {
      const target = pathOf(key);
      // Beside the target, not in tempDir: another instance's sweep at its start empties tempDir.
      const temp = `${target}.${randomBytes(12).toString('hex')}.part`;
      await writeFile(temp, data, { mode: 0o600 });
      await mkdir(dirname(target), { recursive: true });
      try {
        await link(temp, target);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      } finally {
        await rm(temp, { force: true });
      }
    },

    where: (key) => pathOf(key),
    location: resolve(dir),

    async write(key, data) {
      const target = pathOf(key);
      const temp = join(tempDir, `${randomBytes(12).toString('hex')}.part`);
      await writeFile(temp, data, { mode: 0o600 });
      await mkdir(dirname(target), { recursive: true });
      await rename(temp, target);
    },

    async remove(key) {
      await rm(pathOf(key), { force: true });
    },

    async exists(key) {
      return (await stat(pathOf(key)).catch(() => undefined))?.isFile() ?? false;
    },

    async open(key, range) {
      return openFile(pathOf(key), range);
    },

    list: () => listLocalObjects(dir, TEMP_DIR),

    async sweep() {
      for (const name of await readdir(tempDir)) await rm(join(tempDir, name), { force: true, recursive: true });
    },

    async ready() {
      try {
        // Uploads land in tempDir and are renamed into dir: both must be there and writable.
        for (const path of [dir, tempDir]) await access(path, constants.R_OK | constants.W_OK | constants.X_OK);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // EACCES, EROFS: the 503 of a write the file system refuses, with its own fix (server/index.ts).
        if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw error;
        const why = code === 'ENOENT' ? 'is missing' : `cannot be used (${(error as Error).message})`;
        throw new StorageUnavailableError(
          `the archive dir ${(error as NodeJS.ErrnoException).path ?? dir} ${why}`,
          'check that the dir is there (a volume not mounted?) and serve may write it',
        );
      }
    },
  };
}
