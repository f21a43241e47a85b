// The entry of a scan worker thread: runs one job (files on disk, or an archive) and posts the result.
import type { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import type { Finding, SkippedFile } from '../contract/scan.js';
import { SCAN_MAX_FILE_BYTES } from '../contract/limits.js';
import { scanFilesHere, scanner, tooLarge, type PartialReport, type ScanJob } from './run.js';
import { languageOf, type ScanTextOptions } from './scanner.js';

const require = createRequire(import.meta.url);
const yauzl: typeof import('yauzl') = require('yauzl');

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Every entry of the archive a rule reads, one at a time (the server has checked the archive). */
async function scanZip(path: string, options: ScanTextOptions): Promise<PartialReport> {
  const engine = await scanner();
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
      findings.push(...engine.scanText(entry.fileName, (await readAll(stream)).toString('utf8'), options));
    }
  } finally {
    zip.close();
  }
  return { findings, skipped, files };
}

const job = workerData as ScanJob;
const report = job.kind === 'zip' ? await scanZip(job.zip, job.options) : await scanFilesHere(job.files, job.options);
parentPort!.postMessage(report);
