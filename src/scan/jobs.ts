// What a scan is given and gives back across threads: the files or archive entries of a job, and the
// partial report of each worker.
import type { Finding, ScanReport, SkippedFile } from '../contract/scan.js';
import type { FileScan, ScanTextOptions } from './scanner.js';

export interface ScanInput {
  /** The name in the archive: relative to the root, `/`-separated. */
  path: string;
  /** Where to read it. */
  abs: string;
  size: number;
}

/** What one worker (or the calling thread) is given to scan. */
export type ScanJob =
  | {
      kind: 'files';
      files: { path: string; abs: string }[];
      options: ScanTextOptions;
      /** Shared by the workers of one scan: each takes the next file from it (Atomics), so none idles while another has a backlog. */
      next?: SharedArrayBuffer;
      /** When the scan's parses end (Date.now()), the same for its workers. */
      until?: number;
      /** The whole set, for relative imports, when `files` is part of it (the others were in the cache). */
      all?: { path: string; abs: string }[];
      /** Give back each file's scan too (PartialReport.scans), for the cache. */
      keep?: boolean;
    }
  | {
      kind: 'entries';
      zip: string;
      entries: ArchiveEntry[];
      options: ScanTextOptions;
      /** The bytes of the entries that have `at`, one after another (transferred to the worker, not copied). */
      texts?: ArrayBuffer;
      /** The archive's other files, read as Python when a scanned one runs them as code (code-in-data). */
      loadable?: ArchiveEntry[];
    }
  | {
      /** The node classes the archive's Python files define (src/scan/node-classes/). */
      kind: 'classes';
      zip: string;
      entries: ArchiveEntry[];
      /** The folder the package is installed as, for its absolute imports of itself. */
      packageName: string;
      texts?: ArrayBuffer;
    };

/**
 * An entry of an archive the server has checked, with where its data lies (from its local header): the
 * worker reads and inflates it whole, without parsing the zip again or setting up a stream per entry.
 */
export interface ArchiveEntry {
  path: string;
  /** Offset of its data in the archive. */
  start: number;
  compressedSize: number;
  size: number;
  deflated: boolean;
  /** Its bytes, inflated, when the zip check kept them: the scan need not read and inflate it again. */
  data?: Uint8Array;
  /** (in a job) Where its bytes lie in the job's `texts`. */
  at?: number;
}

export interface PartialReport {
  findings: Finding[];
  skipped: SkippedFile[];
  /** Files given. */
  files: number;
  /** Suppressed findings in `findings` and beyond them. */
  suppressed: number;
  /** Findings found but not in `findings` (ScanReport.omitted). */
  omitted: number;
  stopped: NonNullable<ScanReport['stopped']>;
  /** Shipped files that a scanned file runs as code, by archive path, with where (FileScan.loads). */
  loads?: { path: string; by: string; line: number }[];
  /** Each file's scan, when the job asked (`keep`). */
  scans?: { path: string; scan: FileScan }[];
}
