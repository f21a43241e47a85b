// The entry of a scan worker thread: runs jobs (files on disk, or an archive's entries) and posts each result.
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { inflateRawSync } from 'node:zlib';
import { SCAN_MAX_FILE_BYTES } from '../shared/scan.js';
import { addZipScan, isZip, scanNestedZip } from './nested-zip.js';
import { extractNodeClasses, type Extraction } from './node-classes/extract.js';
import {
  packageOf,
  scanEnd,
  scanFilesHere,
  scanner,
  scanOne,
  Tally,
  tooLarge,
  type ArchiveEntry,
  type PartialReport,
  type ScanJob,
} from './run.js';
import type { ScanTextOptions } from './scanner.js';

/**
 * The entries of a checked archive: their bytes as the server kept them (`texts`), or each read and
 * inflated whole (each is at most SCAN_MAX_FILE_BYTES, and the server has checked its sizes and CRC):
 * a stream per entry cost more than the scan of a small node's source.
 */
/**
 * Reads the entries of a checked archive: their bytes as the server kept them (`texts`), or each read and
 * inflated whole (each is at most SCAN_MAX_FILE_BYTES, and the server has checked its sizes and CRC).
 */
function entryReader(path: string, texts?: ArrayBuffer) {
  let fd: number | undefined;
  const read = (entry: ArchiveEntry): Buffer => {
    if (texts && entry.at !== undefined) return Buffer.from(texts, entry.at, entry.size);
    const data = Buffer.allocUnsafe(entry.compressedSize);
    fd ??= openSync(path, 'r');
    if (readSync(fd, data, 0, data.length, entry.start) !== data.length)
      throw new Error(`the archive ends inside ${entry.path}`);
    // (an empty file deflates to 2 bytes; zlib takes no limit below 1)
    return entry.deflated ? inflateRawSync(data, { maxOutputLength: Math.max(entry.size, 1) }) : data;
  };
  const close = () => fd !== undefined && closeSync(fd);
  return { read, close };
}

async function scanEntries(
  path: string,
  entries: ArchiveEntry[],
  options: ScanTextOptions,
  texts?: ArrayBuffer,
  loadable: ArchiveEntry[] = [],
): Promise<PartialReport> {
  const tally = new Tally();
  const until = scanEnd(options);
  const { read, close } = entryReader(path, texts);
  let modules: ReturnType<typeof packageOf> | undefined;
  try {
    modules = packageOf(
      entries
        .filter((e) => e.size <= SCAN_MAX_FILE_BYTES)
        .map((e) => ({ path: e.path, read: () => read(e).toString('utf8') })),
    );
    const spent = { units: 0 };
    for (const entry of entries) {
      if (entry.size > SCAN_MAX_FILE_BYTES) {
        const unparsed = tooLarge(entry.path, entry.size, () => read(entry).toString('utf8'));
        if (unparsed) tally.skipped.push(unparsed);
        continue;
      }
      tally.add(
        entry.path,
        await scanOne(entry.path, read(entry).toString('utf8'), { ...options, package: modules, spent }, until),
      );
    }
    await scanLoaded(tally, loadable, read, { ...options, spent }, until);
  } finally {
    modules?.dispose();
    close();
  }
  return tally.report(entries.length);
}

/**
 * The archive's other files that scanned ones run as code (code-in-data), read as Python, and the zips
 * they put on sys.path, read inside, each once (as `nodereg scan` does, run.ts scanLoaded); the loads
 * they make in turn are not followed.
 */
async function scanLoaded(
  tally: Tally,
  loadable: ArchiveEntry[],
  read: (entry: ArchiveEntry) => Buffer,
  options: ScanTextOptions,
  until?: number,
): Promise<void> {
  if (!tally.loads.length || !loadable.length) return;
  const byPath = new Map(loadable.map((entry) => [entry.path, entry]));
  const done = new Set<string>();
  for (const { path } of [...tally.loads]) {
    const entry = byPath.get(path);
    if (!entry || done.has(path)) continue;
    done.add(path);
    if (isZip(path)) {
      const member = (file: string, text: string) => scanOne(file, text, options, until);
      addZipScan(tally, await scanNestedZip(path, entry.size, () => read(entry), member));
    } else if (entry.size <= SCAN_MAX_FILE_BYTES)
      tally.add(path, await scanOne(path, read(entry).toString('utf8'), { ...options, language: 'python' }, until));
  }
}

/** The node classes an archive's Python files define (the same files and parser as the scan). */
async function classesOf(
  path: string,
  entries: ArchiveEntry[],
  packageName: string,
  texts?: ArrayBuffer,
): Promise<Extraction> {
  const { read, close } = entryReader(path, texts);
  try {
    const files = new Map(
      entries
        .filter((entry) => entry.size <= SCAN_MAX_FILE_BYTES)
        .map((entry) => [entry.path, read(entry).toString('utf8')]),
    );
    const parser = await scanner();
    return extractNodeClasses(files, (text) => parser.parsePython(text), packageName);
  } finally {
    close();
  }
}

const runJob = (job: ScanJob): Promise<PartialReport | Extraction> =>
  job.kind === 'classes'
    ? classesOf(job.zip, job.entries, job.packageName, job.texts)
    : job.kind === 'entries'
      ? scanEntries(job.zip, job.entries, job.options, job.texts, job.loadable)
      : scanFilesHere(job.files, job.options, job.next, job.until, { all: job.all, keep: job.keep });

if (workerData) {
  // one job, given at start (the CLI's workers); a failure ends the worker with its error, as a throw would
  void runJob(workerData as ScanJob).then((report) => parentPort!.postMessage(report));
} else {
  // a kept worker (the registry's): one job per message, one at a time
  parentPort!.on('message', (job: ScanJob) => {
    runJob(job).then(
      (report) => parentPort!.postMessage(report),
      (error: Error) => {
        throw error; // ends the thread; the server sees the error and starts a new one
      },
    );
  });
}
