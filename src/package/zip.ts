// The deterministic, streamed archive of DESIGN.md §6, written by this small zip writer: entries in
// UTF-8 byte order, `/` separators, the UTF-8 name flag, DOS time 1980-01-01 00:00, no extra fields,
// modes 0644/0755, deflate except for formats that are compressed already (stored as they are, and
// so is a file that deflate would not make smaller). Files up to 1 MiB go in batches to worker
// threads, one per core (at most 4), that read, checksum and deflate them (deflate.ts); the batches
// come back in any order and are written in order. Larger files are streamed in their turn with a
// data descriptor. The bytes depend only on the files, never on the number of workers. The sha256
// and the size are computed while the bytes go to disk. docs/decisions.md says why not yazl or fflate.
import { existsSync } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { BATCH_BUFFER, type BatchFile, type PreparedBatch, prepareBatch } from './deflate.js';
import { compareUtf8, type SelectedFile } from './files.js';
import { formatSize } from '../contract/size.js';
import {
  FileChangedError,
  Output,
  streamEntry,
  WRITE_BLOCK,
  writeCentralDirectory,
  writePrepared,
  type Written,
} from './zip/entries.js';

export { isStored, STORED_EXTENSIONS } from './deflate.js';
export { FileChangedError } from './zip/entries.js';

/** Files up to this size are read whole and deflated ahead; larger ones are streamed in their turn. */
const SMALL_FILE = 1024 * 1024;
/** A batch (one message to a worker) holds up to BATCH_BUFFER bytes (a few ms of deflate) and this many files. */
const BATCH_FILES = 64;
/** Bytes of files sent ahead and not yet written: what packing holds in memory, whatever the tree. */
const WINDOW_BYTES = 4 * 1024 * 1024;
/** With less than this to prepare, starting workers (~30 ms each) costs more than it saves. */
const IN_THREAD_BYTES = 2 * 1024 * 1024;
/** Workers by default at most: each costs ~8 MiB of memory to start; the tests of flat memory use 2. */
const MAX_WORKERS = 4;
/** Beyond these the zip format needs Zip64 records, which this writer does not write. */
const ZIP32_MAX = 0xffffffff;
const ZIP32_ENTRIES = 0xffff;

export interface ArchiveResult {
  path: string;
  /** Archive size in bytes. */
  size: number;
  sha256: string;
  files: number;
  /** Sum of the files' sizes. */
  unpackedSize: number;
  /** The Git LFS pointers packed, by path (lfs.ts): told from the bytes packed, so no file is read twice. */
  lfsPointers: string[];
}

/** The archive grew past `--max-size`; lists the largest files so the user knows what to leave out. */
export class ArchiveTooLargeError extends Error {
  constructor(
    readonly limit: number,
    readonly largest: SelectedFile[],
  ) {
    super(`the archive is larger than the limit of ${limit} bytes`);
    this.name = 'ArchiveTooLargeError';
  }
}

export interface ArchiveOptions {
  /** Compressed size limit in bytes. */
  maxSize?: number;
  /** Worker threads that read and deflate (default: one per core up to 4, none for a small tree or a single core; 0: none). The archive is the same for any number. */
  workers?: number;
  /** Called as the archive grows, with its bytes written so far. */
  onProgress?: (archiveBytes: number) => void;
  /**
   * Workers started ahead by `startPool` (they start while the file set is listed): used when the
   * tree is large enough for workers, and stopped by writeArchive in any case. Ignored with `workers`.
   */
  pool?: Pool;
}

/** What the central directory needs of an entry written. */
/**
 * The worker's entry file, dist/package/deflate-worker.js: found from this module in the bundle (a
 * chunk in dist/chunks/, or dist/package/ itself) and from the TypeScript sources the tests run.
 */
function workerUrl(): URL {
  for (const candidate of [
    './deflate-worker.js',
    '../package/deflate-worker.js',
    '../../dist/package/deflate-worker.js',
  ]) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(url)) return url;
  }
  throw new Error('the packer worker (dist/package/deflate-worker.js) is missing: run `npm run build`');
}

/** Prepares a batch; `returned` are buffers of earlier batches, written and free to be filled again. */
type Prepare = (files: BatchFile[], returned: ArrayBuffer[]) => Promise<PreparedBatch>;

/** Small files found while the file set is listed, prepared ahead in the order found, up to this many bytes. */
const EARLY_BYTES = 8 * 1024 * 1024;

/** Files prepared together (one message to a worker); written one by one in path order, wherever they are. */
interface Batch {
  files: BatchFile[];
  bytes: number;
  ready?: Promise<PreparedBatch>;
  /** Bytes of its files in this archive, counted ahead until the batch comes back. */
  held: number;
  /** Its files in this archive not written yet: at 0 its buffer is free again. */
  left: number;
  /** Where each entry's bytes start in the batch's data. */
  offsets?: number[];
}

interface Slot {
  batch: Batch;
  index: number;
}

export interface Pool {
  prepare: Prepare;
  stop: () => Promise<unknown>;
  /** Offers a file as the listing finds it: small files go to the workers in batches, up to EARLY_BYTES. */
  offer: (file: SelectedFile) => void;
  /** The files offered and sent, by absolute path. */
  early: Map<string, Slot>;
}

/** The workers to start by default: one per core, at most MAX_WORKERS; none on a single core, where a worker has no core of its own. */
const defaultWorkers = () => {
  const cores = availableParallelism();
  return cores < 2 ? 0 : Math.min(cores, MAX_WORKERS);
};

/**
 * A pool of the default number of workers for writeArchive (undefined on a single core), taking files
 * as the listing finds them: once 2 MiB of small files are found, the workers start and deflate them
 * on the other cores while this thread lists the rest. Pass it in `ArchiveOptions.pool`; writeArchive
 * stops it.
 */
export function startPool(): Pool | undefined {
  const count = defaultWorkers();
  return count > 0 ? startWorkers(count) : undefined;
}

const newBatch = (): Batch => ({ files: [], bytes: 0, held: 0, left: 0 });

/**
 * Worker threads preparing batches; each batch goes to the thread with the fewest waiting. The
 * threads start with the first batch: a small tree never starts them.
 */
function startWorkers(count: number): Pool {
  let failed: Error | undefined;
  let nextId = 0;
  const start = () =>
    Array.from({ length: count }, () => {
      // Not the parent's Node flags: `--input-type` or `--eval` there would stop a worker from starting.
      // A small young generation: a worker makes little garbage, and collecting it often hands the
      // buffers zlib allocated back sooner (peak RSS of the bench pack ~15 MiB lower, the same CPU).
      const worker = new Worker(workerUrl(), { execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 2 } });
      const waiting = new Map<number, { resolve: (batch: PreparedBatch) => void; reject: (error: Error) => void }>();
      worker.on('message', ({ id, batch }: { id: number; batch: PreparedBatch }) => {
        waiting.get(id)?.resolve(batch);
        waiting.delete(id);
      });
      const fail = (error: Error) => {
        failed ??= error;
        for (const { reject } of waiting.values()) reject(failed);
        waiting.clear();
      };
      worker.on('error', fail);
      worker.on('exit', (code) => fail(new Error(`a packer worker stopped (exit code ${code})`)));
      return { worker, waiting };
    });
  let threads: ReturnType<typeof start> | undefined;
  const prepare: Prepare = (files, returned) => {
    if (failed) return Promise.reject(failed);
    threads ??= start();
    const thread = threads.reduce((a, b) => (b.waiting.size < a.waiting.size ? b : a));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      thread.waiting.set(id, { resolve, reject });
      thread.worker.postMessage({ id, files, returned }, returned);
    });
  };
  // Offered files wait in full batches until they add up to IN_THREAD_BYTES, below which writeArchive
  // starts no worker; a file left in the last, unsent batch is prepared with the others.
  const early = new Map<string, Slot>();
  const full: Batch[] = [];
  let earlyBytes = 0;
  let pending = newBatch();
  const offer = (file: SelectedFile) => {
    if (file.size > SMALL_FILE || earlyBytes + file.size > EARLY_BYTES) return;
    if (pending.bytes + file.size > BATCH_BUFFER || pending.files.length >= BATCH_FILES)
      full.push(pending), (pending = newBatch());
    early.set(file.abs, { batch: pending, index: pending.files.length });
    pending.files.push({ path: file.path, abs: file.abs, size: file.size });
    pending.bytes += file.size;
    earlyBytes += file.size;
    if (earlyBytes < IN_THREAD_BYTES) return;
    for (const batch of full.splice(0)) {
      batch.ready = prepare(batch.files, []);
      batch.ready.catch(() => {}); // reported when its turn comes
    }
  };
  return {
    prepare,
    offer,
    early,
    stop: async () => threads && Promise.all(threads.map(({ worker }) => worker.terminate())),
  };
}

/** Writes `files` (any order) into a zip at `outPath`. On failure the partial file is removed. */
export async function writeArchive(
  files: SelectedFile[],
  outPath: string,
  options: ArchiveOptions = {},
): Promise<ArchiveResult> {
  const sorted = [...files].sort((a, b) => compareUtf8(a.path, b.path));
  checkZip32(sorted);
  const maxSize = Math.min(options.maxSize ?? Infinity, ZIP32_MAX);
  const smallBytes = sorted.reduce((sum, file) => sum + (file.size > SMALL_FILE ? 0 : file.size), 0);
  const workers = options.workers ?? (smallBytes < IN_THREAD_BYTES ? 0 : defaultWorkers());
  const usePool = options.pool && options.workers === undefined && workers > 0;
  if (options.pool && !usePool) await options.pool.stop();
  const handle = await openOrStop(outPath, usePool ? options.pool : undefined);
  const pool = usePool ? options.pool : workers > 0 && smallBytes > 0 ? startWorkers(workers) : undefined;
  const spares: ArrayBuffer[] = []; // this thread's, as a worker keeps its own
  const prepare: Prepare =
    pool?.prepare ?? (async (batch, returned) => (spares.push(...returned), prepareBatch(batch, spares)));
  const returned: ArrayBuffer[] = [];
  let chunk: Buffer | undefined;
  const out = newOutput(handle, maxSize, sorted, options);

  const planned = planBatches(sorted, usePool ? pool!.early : undefined);
  const { slots, batches } = planned;
  let ahead = planned.early; // bytes of files sent and not yet back
  const lfsPointers: string[] = [];

  // Batches are sent ahead of the one being written, within WINDOW_BYTES (the one a file needs goes
  // whatever the window); each is awaited in turn (its failure too), so the bytes never depend on which
  // finishes first.
  let sent = 0;
  const send = () => {
    const batch = batches[sent++];
    batch.ready = prepare(batch.files, returned.splice(0));
    batch.ready.catch(() => {}); // reported when its turn comes
    ahead += batch.held;
  };
  const sendAhead = () => {
    while (sent < batches.length && ahead + batches[sent].held <= WINDOW_BYTES) send();
  };

  try {
    sendAhead();
    const written: Written[] = [];
    for (const file of sorted) {
      const name = Buffer.from(file.path, 'utf8');
      const slot = slots.get(file);
      if (!slot) {
        chunk ??= Buffer.allocUnsafeSlow(WRITE_BLOCK);
        written.push(await streamEntry(out, file, name, chunk));
        continue;
      }
      const { batch, index } = slot;
      while (!batch.ready) send();
      const prepared = await batch.ready;
      if (!batch.offsets) {
        batch.offsets = [];
        let at = 0;
        for (const entry of prepared.entries) batch.offsets.push(at), (at += 'error' in entry ? 0 : entry.length);
        ahead -= batch.held;
        sendAhead();
      }
      const entry = prepared.entries[index];
      if ('error' in entry)
        throw entry.changed
          ? new FileChangedError(file.path)
          : Object.assign(new Error(entry.error), { code: entry.code });
      if (entry.lfsPointer) lfsPointers.push(file.path);
      const data = Buffer.from(prepared.data.buffer, prepared.data.byteOffset + batch.offsets[index], entry.length);
      written.push(await writePrepared(out, file, name, entry, data));
      if (--batch.left === 0) {
        await out.flush(); // the batch's buffer is then free: back to a worker with the next batch
        returned.push(prepared.data.buffer as ArrayBuffer);
      }
    }
    await writeCentralDirectory(out, written);
    await out.flush();
    await handle.close();
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(outPath, { force: true });
    throw error;
  } finally {
    await pool?.stop();
  }
  return {
    path: outPath,
    size: out.offset,
    sha256: out.sha256(),
    files: sorted.length,
    unpackedSize: sorted.reduce((sum, f) => sum + f.size, 0),
    lfsPointers,
  };
}

/** Opens the archive file; the pool is stopped when it cannot be. */
async function openOrStop(outPath: string, pool: Pool | undefined): Promise<FileHandle> {
  try {
    return await open(outPath, 'w');
  } catch (error) {
    if (pool) await pool.stop();
    throw error;
  }
}

/** The archive's output; past `maxSize` it fails naming the largest files, past 4 GiB as zip32 must. */
function newOutput(handle: FileHandle, maxSize: number, sorted: SelectedFile[], options: ArchiveOptions): Output {
  return new Output(
    handle,
    maxSize,
    () =>
      options.maxSize !== undefined && maxSize === options.maxSize
        ? new ArchiveTooLargeError(maxSize, largestFiles(sorted))
        : new Error('the archive would pass 4 GiB, beyond what this zip writer writes'),
    options.onProgress,
  );
}

/** Fails before any byte is read: a 5 GiB file that deflates small would be read whole, then fail. */
function checkZip32(sorted: SelectedFile[]): void {
  if (sorted.length > ZIP32_ENTRIES)
    throw new Error(`an archive holds at most ${ZIP32_ENTRIES} files; this one would hold ${sorted.length}`);
  const huge = sorted.find((file) => file.size > ZIP32_MAX);
  if (huge)
    throw new Error(
      `${huge.path} is ${formatSize(huge.size)}; an archive holds no file over 4 GiB (leave it out with [tool.nodereg] excludes or a .noderegignore file)`,
    );
}

/**
 * Each small file's batch: one sent ahead while the files were listed (same path and size), else
 * one of the batches made here in path order. `early`: the bytes of the files sent ahead.
 */
function planBatches(
  sorted: SelectedFile[],
  sentEarly: Map<string, Slot> | undefined,
): { slots: Map<SelectedFile, Slot>; batches: Batch[]; early: number } {
  const slots = new Map<SelectedFile, Slot>();
  const batches: Batch[] = [];
  let ahead = 0;
  for (const file of sorted) {
    if (file.size > SMALL_FILE) continue;
    const early = sentEarly?.get(file.abs);
    if (early?.batch.ready && early.batch.files[early.index].size === file.size) {
      slots.set(file, early);
      early.batch.held += file.size;
      early.batch.left++;
      ahead += file.size;
      continue;
    }
    let batch = batches.at(-1);
    if (!batch || batch.bytes + file.size > BATCH_BUFFER || batch.files.length >= BATCH_FILES)
      batches.push((batch = newBatch()));
    slots.set(file, { batch, index: batch.files.length });
    batch.files.push({ path: file.path, abs: file.abs, size: file.size });
    batch.bytes += file.size;
    batch.held += file.size;
    batch.left++;
  }
  return { slots, batches, early: ahead };
}

/** The ten largest files, largest first (ties by name). */
export function largestFiles(files: SelectedFile[], count = 10): SelectedFile[] {
  return [...files].sort((a, b) => b.size - a.size || compareUtf8(a.path, b.path)).slice(0, count);
}
