// The entry of a scan worker thread: runs jobs (files on disk, or an archive) and posts each result.
import type { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import type { Finding, SkippedFile } from '../contract/scan.js';
import { SCAN_MAX_FILE_BYTES } from '../contract/limits.js';
import { scanFilesHere, scanOne, tooLarge, type PartialReport, type ScanJob } from './run.js';
import { languageOf } from './languages.js';
import type { ScanTextOptions } from './scanner.js';

const require = createRequire(import.meta.url);
const yauzl: typeof import('yauzl') = require('yauzl');

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Every entry of the archive a rule reads, one at a time (the server has checked the archive). */
async function scanZip(path: string, options: ScanTextOptions): Promise<PartialReport> {
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false });
  const findings: Finding[] = [];
  const skipped: SkippedFile[] = [];
  let files = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/')) continue;
      files++;
      if (!languageOf(entry.fileName)) continue;
      if (entry.uncompressedSize > SCAN_MAX_FILE_BYTES) {
        skipped.push(tooLarge(entry.fileName, entry.uncompressedSize));
        continue;
      }
      const stream = await new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (error, s) => (error ? reject(error) : resolve(s))));
      findings.push(...(await scanOne(entry.fileName, (await readAll(stream)).toString('utf8'), options)));
    }
  } finally {
    zip.close();
  }
  return { findings, skipped, files };
}

const runJob = (job: ScanJob) => (job.kind === 'zip' ? scanZip(job.zip, job.options) : scanFilesHere(job.files, job.options, job.next));

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
