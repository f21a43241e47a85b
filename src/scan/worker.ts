// The entry of a scan worker thread: runs jobs (files on disk, or an archive's entries) and posts each result.
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { inflateRawSync } from 'node:zlib';
import type { SkippedFile } from '../contract/scan.js';
import { SCAN_GATE_MAX_BYTES, SCAN_MAX_FILE_BYTES } from '../contract/limits.js';
import { scanFilesHere, scanOne, Tally, tooLarge, type ArchiveEntry, type PartialReport, type ScanJob } from './run.js';
import { admittedRules, type ScanTextOptions } from './scanner.js';

/**
 * The entries of a checked archive: their bytes as the server kept them (`texts`), or each read and
 * inflated whole (each is at most SCAN_MAX_FILE_BYTES, and the server has checked its sizes and CRC):
 * a stream per entry cost more than the scan of a small node's source.
 */
async function scanEntries(path: string, entries: ArchiveEntry[], options: ScanTextOptions, texts?: ArrayBuffer): Promise<PartialReport> {
  const tally = new Tally();
  const skipped: SkippedFile[] = [];
  let fd: number | undefined;
  try {
    const read = (entry: ArchiveEntry): Buffer => {
      if (texts && entry.at !== undefined) return Buffer.from(texts, entry.at, entry.size);
      const data = Buffer.allocUnsafe(entry.compressedSize);
      fd ??= openSync(path, 'r');
      if (readSync(fd, data, 0, data.length, entry.start) !== data.length) throw new Error(`the archive ends inside ${entry.path}`);
      // (an empty file deflates to 2 bytes; zlib takes no limit below 1)
      return entry.deflated ? inflateRawSync(data, { maxOutputLength: Math.max(entry.size, 1) }) : data;
    };
    for (const entry of entries) {
      if (entry.size > SCAN_MAX_FILE_BYTES) {
        // Not parsed, but its text is read for what the rules look for: a file the gate admits nothing in
        // has no findings, and one it does is listed with those rules (the registry flags it for review:
        // padding a file past the limit hid its os.system call).
        const rules = entry.size <= SCAN_GATE_MAX_BYTES ? admittedRules(entry.path, read(entry).toString('utf8')).map((a) => a.rule.id) : undefined;
        if (!rules || rules.length) skipped.push({ ...tooLarge(entry.path, entry.size), ...(rules ? { rules } : {}) });
        continue;
      }
      tally.add(entry.path, await scanOne(entry.path, read(entry).toString('utf8'), options));
    }
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return tally.report(skipped, entries.length);
}

const runJob = (job: ScanJob) =>
  job.kind === 'entries' ? scanEntries(job.zip, job.entries, job.options, job.texts) : scanFilesHere(job.files, job.options, job.next);

if (workerData) {
  // one job, given at start (the CLI's workers)
  parentPort!.postMessage(await runJob(workerData as ScanJob));
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
