// The registry's scan of an uploaded archive (DESIGN.md §10): run in a worker thread, off the event
// loop, a few at a time; a small set of source whose text admits no rule is decided on the event loop.
// Under `--scan flag` a version with an unsuppressed finding of high or above becomes Flagged, with a
// one-line reason; under `warn` the findings are only kept.
import { availableParallelism } from 'node:os';
import { atLeast, SCAN_FLAG_AT, SCAN_MAX_FILE_BYTES, SCAN_MAX_KEPT_FINDINGS, SCAN_QUEUE_MAX, SCAN_QUEUE_RETRY_AFTER_S, SCAN_SEVERITIES, SCAN_TIMEOUT_MS, type SCAN_MODES } from '../contract/limits.js';
import type { Finding, ScanReport } from '../contract/scan.js';
import { scanArchive, ScanTimeout, ScanWorker, type ArchiveEntry } from '../scan/run.js';
import { rules } from '../scan/rules/index.js';
import { admittedRules } from '../scan/scanner.js';
import { HttpError } from './errors.js';
import { turnsEvery } from './turns.js';

export type ScanMode = (typeof SCAN_MODES)[number];

export interface UploadScan {
  /**
   * The findings to keep with the version (the most severe first, at most SCAN_MAX_KEPT_FINDINGS);
   * undefined when the scan could not finish (nothing is known: none are recorded).
   */
  findings?: Finding[];
  /** Set when the version must be Flagged: the one-line status_reason. */
  flag?: string;
}

export interface ScanLimits {
  /** Past this a scan is stopped and counts as not finished. Default 10 minutes: 1 GiB of source at a few MB/s takes minutes. */
  timeoutMs?: number;
  /** The heap of each scan worker, in MiB; past it the worker ends (a crash) and the scan counts as not finished. Default 512. */
  maxOldGenerationSizeMb?: number;
  /** Scans waiting for a worker, at most (SCAN_QUEUE_MAX); past it `scan` throws `scanQueueFull()`. */
  queueMax?: number;
}

/** The answer to an upload while the scan queue is full: nothing is stored, the same upload may be sent again. */
export const scanQueueFull = () =>
  new HttpError('unavailable', 'the registry has too many uploads waiting for their scan at the moment; nothing was stored, retry shortly', undefined, undefined, {
    'Retry-After': String(SCAN_QUEUE_RETRY_AFTER_S),
  });

/** Runs at most `limit` tasks at a time, the others wait their turn; `full` once `queueMax` of them wait. */
function limiter(limit: number, queueMax: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  const full = () => running >= limit && waiting.length >= queueMax;
  const run = async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
  return { run, full };
}

/**
 * "dynamic-execution at nodes/run.py:7, runtime-install at nodes/run.py:4 (and 3 more)"; "at least" when
 * the scan stopped counting (ScanReport.stopped, omitted).
 */
export function flagReason(stopping: Finding[], counted = true): string {
  const shown = stopping.slice(0, 2).map((f) => `${f.rule} at ${f.file}:${f.line}`).join(', ');
  const more = stopping.length > 2 ? ` (and ${counted ? '' : 'at least '}${stopping.length - 2} more)` : '';
  return `scan: ${shown}${more}`.slice(0, 1000);
}

/**
 * A set of at most this much source, all of it kept by the zip check, goes through the scan's text
 * gate (admittedRules) on the event loop first: ~6 ms for 1 MiB here, in steps of one file (at most
 * 256 KiB: the check keeps no larger one) with turns between. A file no rule admits has no findings,
 * so a node whose files name nothing risky is decided without the worker (its round trip and copy
 * were ~0.7 of the ~4 ms such a scan took, measured), and otherwise only the files from the first one
 * a rule admits go to it.
 */
const INLINE_GATE_BYTES = 1024 * 1024;

/** The index of the first entry whose text admits a rule, or -1; every entry has its `data`. */
async function firstAdmitting(entries: ArchiveEntry[]): Promise<number> {
  const turns = turnsEvery(1);
  for (let i = 0; i < entries.length; i++) {
    await turns();
    const { path, data } = entries[i];
    if (admittedRules(path, Buffer.from(data!.buffer, data!.byteOffset, data!.byteLength).toString('utf8')).length) return i;
  }
  return -1;
}

const SEVERITY_OF = new Map(rules.map((rule) => [rule.id, rule.severity]));
const bySeverity = (a: Finding, b: Finding) => SCAN_SEVERITIES.indexOf(b.severity) - SCAN_SEVERITIES.indexOf(a.severity);

export interface UploadScanner {
  /** `scannable`: the entries the scanner reads (from validateZip); with none, no worker is used. Undefined under `off`. */
  scan(zipPath: string, scannable: ArchiveEntry[], label: string): Promise<UploadScan | undefined>;
  /** True while an upload that needs a worker would be refused (scanQueueFull): checked before its body is read. */
  full(): boolean;
  /** Ends the worker threads. */
  close(): Promise<unknown>;
}

export function createUploadScanner(mode: ScanMode, log: (line: string) => void, limits: ScanLimits = {}): UploadScanner {
  // One core stays with the event loop; each worker is started on first use and kept.
  const size = Math.max(1, availableParallelism() - 1);
  const workerLimits = { timeoutMs: limits.timeoutMs ?? SCAN_TIMEOUT_MS, maxOldGenerationSizeMb: limits.maxOldGenerationSizeMb ?? 512 };
  const workers = Array.from({ length: size }, () => new ScanWorker(workerLimits));
  const idle = [...workers];
  const queue = limiter(size, limits.queueMax ?? SCAN_QUEUE_MAX);
  const withWorker = <T>(task: (worker: ScanWorker) => Promise<T>) =>
    queue.run(async () => {
      const worker = idle.pop()!;
      try {
        return await task(worker);
      } finally {
        idle.push(worker);
      }
    });
  const close = () => Promise.all(workers.map((worker) => worker.stop()));
  const scan = async (zipPath: string, scannable: ArchiveEntry[], label: string): Promise<UploadScan | undefined> => {
    if (mode === 'off') return undefined;
    if (!scannable.length) return { findings: [] };
    let toScan = scannable;
    if (scannable.every((entry) => entry.data) && scannable.reduce((sum, entry) => sum + entry.size, 0) <= INLINE_GATE_BYTES) {
      const first = await firstAdmitting(scannable);
      if (first < 0) return { findings: [] };
      toScan = scannable.slice(first);
    }
    // refused here, not below: a full queue is no failed scan, and the upload may be sent again
    if (queue.full()) throw scanQueueFull();
    let report: ScanReport;
    try {
      report = await withWorker((worker) => scanArchive(worker, zipPath, toScan, { server: true }));
    } catch (error) {
      // A crash or a timeout: the upload stands and the server goes on (the worker is replaced on the next
      // scan). Nothing is known of the archive, so no findings are kept; under `flag` an admin must look.
      // Everyone reads status_reason: it says what happened, the error itself (paths) stays in the log.
      log(`scan of ${label} failed: ${(error as Error).message}`);
      const why = error instanceof ScanTimeout ? error.message : 'the scanner stopped';
      return { flag: mode === 'flag' ? `scan: could not finish (${why}); an admin must review it` : undefined };
    }
    const { findings, omitted, stopped } = report;
    const stopping = findings.filter((f) => !f.suppressed && atLeast(f.severity, SCAN_FLAG_AT));
    const kept = [...findings].sort(bySeverity).slice(0, SCAN_MAX_KEPT_FINDINGS);
    // a file too large to parse that names what a flagging rule looks for (or too large to read) may hide one
    const unread = (report.skipped ?? []).filter((s) => !s.rules || s.rules.some((id) => atLeast(SEVERITY_OF.get(id)!, SCAN_FLAG_AT)));
    const flag = stopping.length
      ? flagReason(stopping, !omitted && !stopped)
      : unread.length
        ? `scan: could not scan ${unread[0].file} (over ${SCAN_MAX_FILE_BYTES} bytes)${unread[0].rules ? `, which names what ${unread[0].rules.join(', ')} ${unread[0].rules.length > 1 ? 'look' : 'looks'} for` : ''}; an admin must review it`.slice(0, 1000)
        : undefined;
    return { findings: kept, flag: mode === 'flag' ? flag : undefined };
  };
  return { scan, full: () => mode !== 'off' && queue.full(), close };
}
