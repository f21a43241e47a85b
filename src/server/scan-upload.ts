// The registry's scan of an uploaded archive (DESIGN.md §10): run in a worker thread, off the event
// loop, a few at a time; a small set of source whose text admits no rule is decided on the event loop.
// Under `--scan flag` a version with an unsuppressed finding of high or above becomes Flagged, with a
// one-line reason; under `warn` the findings are only kept.
import { availableParallelism } from 'node:os';
import { publisherScanQueueFull, SCAN_QUEUE_FULL } from '../contract/errors.js';
import { atLeast, SCAN_QUEUE_PER_PUBLISHER, SCAN_SEVERITIES } from '../contract/limits.js';
import { COMPILED_PYTHON, SCAN_FLAG_AT, unscannedFlag, type SCAN_MODES } from '../shared/scan.js';
import { SCAN_MAX_KEPT_FINDINGS, SCAN_QUEUE_MAX, SCAN_QUEUE_RETRY_AFTER_S, SCAN_TIMEOUT_MS } from '../shared/tuning.js';
import type { Finding, ScanReport } from '../contract/scan.js';
import { archiveClasses, PARSE_LIMITS, scanArchive, type ArchiveEntry } from '../scan/run.js';
import { ScanTimeout, ScanWorker } from '../scan/threads.js';
import type { Extraction } from '../scan/node-classes/extract.js';
import { mayFind } from '../scan/scanner.js';
import { HttpError } from './errors.js';
import { yieldEvery } from './turns.js';

export type ScanMode = (typeof SCAN_MODES)[number];

export interface UploadScan {
  /**
   * The findings to keep with the version (the most severe first, at most SCAN_MAX_KEPT_FINDINGS);
   * undefined when the scan could not finish (nothing is known: none are recorded).
   */
  findings?: Finding[];
  /** Set when the version must be Flagged: the one-line status_reason. */
  flag?: string;
  /**
   * Set when `flag` comes from these findings alone (each with its fingerprint, none left uncounted, no
   * file unread): an admin's approval of them all for the node lifts the flag (services/approvals.ts).
   */
  approvable?: Finding[];
}

export interface ScanLimits {
  /** Past this a scan is stopped and counts as not finished. Default 10 minutes: 1 GiB of source at a few MB/s takes minutes. */
  timeoutMs?: number;
  /** The heap of each scan worker, in MiB; past it the worker ends (a crash) and the scan counts as not finished. Default 512. */
  maxOldGenerationSizeMb?: number;
  /** Scans waiting for a worker, at most (SCAN_QUEUE_MAX); past it `scan` throws `scanQueueFull()`. */
  queueMax?: number;
  /** Scans of one publisher running or waiting, at most (SCAN_QUEUE_PER_PUBLISHER). */
  perPublisher?: number;
  /** How long one file's parse may run, and one upload's parses in all (SCAN_PARSE_MS, SCAN_BUDGET_MS). */
  parseMs?: number;
  budgetMs?: number;
}

/** The answer to an upload refused for the scan queue: nothing is stored, the same upload may be sent again. */
const busy = (message: string) =>
  new HttpError('unavailable', message, undefined, undefined, { 'Retry-After': String(SCAN_QUEUE_RETRY_AFTER_S) });
export const scanQueueFull = () => busy(SCAN_QUEUE_FULL);

/**
 * Runs at most `limit` tasks at a time; the others wait, and the one whose key (a publisher) started a
 * task longest ago goes first, so a key with many waiting takes turns with the others instead of
 * going before them. `full` once `queueMax` wait; `fullFor(key)` once that key holds `perKey`.
 */
function limiter(limit: number, queueMax: number, perKey: number) {
  let running = 0;
  let waitingCount = 0;
  const waiting = new Map<string, (() => void)[]>();
  /** Per key with tasks running or waiting: how many, and when it last started one. */
  const held = new Map<string, { count: number; turn: number }>();
  let turns = 0;
  const full = () => running >= limit && waitingCount >= queueMax;
  const fullFor = (key: string) => (held.get(key)?.count ?? 0) >= perKey;
  const startNext = () => {
    let first: string | undefined;
    for (const key of waiting.keys())
      if (first === undefined || held.get(key)!.turn < held.get(first)!.turn) first = key;
    if (first === undefined) return;
    const list = waiting.get(first)!;
    const wake = list.shift()!;
    if (!list.length) waiting.delete(first);
    waitingCount--;
    wake();
  };
  const run = async <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const mine = held.get(key) ?? { count: 0, turn: 0 };
    held.set(key, mine);
    mine.count++;
    try {
      if (running >= limit) {
        waitingCount++;
        const list = waiting.get(key) ?? [];
        waiting.set(key, list);
        await new Promise<void>((resolve) => list.push(resolve));
      }
      running++;
      mine.turn = ++turns;
      try {
        return await task();
      } finally {
        running--;
        startNext();
      }
    } finally {
      if (--mine.count === 0) held.delete(key);
    }
  };
  return { run, full, fullFor };
}

/**
 * "dynamic-execution at nodes/run.py:7, runtime-install at nodes/run.py:4 (and 3 more)"; "at least" when
 * the scan stopped counting (ScanReport.stopped, omitted).
 */
export function flagReason(stopping: Finding[], counted = true): string {
  const shown = stopping
    .slice(0, 2)
    .map((f) => `${f.rule} at ${f.file}:${f.line}`)
    .join(', ');
  const more = stopping.length > 2 ? ` (and ${counted ? '' : 'at least '}${stopping.length - 2} more)` : '';
  return `scan: ${shown}${more}`.slice(0, 1000);
}

/**
 * A set of at most this much source, all of it kept by the zip check, goes through the scan's text
 * gate (mayFind) on the event loop first, in steps of one file (at most 256 KiB: the check keeps no
 * larger one) with turns between. A file the gate passes over has no findings, so a node whose files
 * name nothing risky is decided without the worker (its round trip and copy are most of what such a
 * scan costs); otherwise every file goes to it, the quiet ones as the package's modules whose
 * functions the resolution layer follows.
 */
const INLINE_GATE_BYTES = 1024 * 1024;

/** Whether the text of some entry may hold a finding; every entry has its `data`. */
async function anyMayFind(entries: ArchiveEntry[]): Promise<boolean> {
  const yieldIfDue = yieldEvery(1);
  for (const { path, data } of entries) {
    await yieldIfDue();
    if (mayFind(path, Buffer.from(data!.buffer, data!.byteOffset, data!.byteLength).toString('utf8'))) return true;
  }
  return false;
}

const bySeverity = (a: Finding, b: Finding) =>
  SCAN_SEVERITIES.indexOf(b.severity) - SCAN_SEVERITIES.indexOf(a.severity);

export interface UploadScanner {
  /**
   * `scannable`: the entries the scanner reads (from validateZip); with none, no worker is used. Undefined
   * under `off`. Throws refusal()'s error when it cannot wait for a worker.
   */
  /**
   * `compiled`: an entry of compiled Python (validateZip), which Flags the version when nothing else does;
   * `loadable`: the archive's other files, scanned as Python when a scanned file runs them as code.
   */
  scan(
    zipPath: string,
    scannable: ArchiveEntry[],
    label: string,
    publisherId: string,
    compiled?: string,
    loadable?: ArchiveEntry[],
  ): Promise<UploadScan | undefined>;
  /** The 503 an upload of this publisher that needs a worker would get now (queue full, or the publisher's share of it); checked before its body is read. */
  refusal(publisherId: string): HttpError | undefined;
  /**
   * The node classes the archive's Python files define, read in a worker (never run; under every scan
   * mode); `failed` with a reason when the worker could not finish.
   */
  classes(zipPath: string, scannable: ArchiveEntry[], nodeId: string, publisherId: string): Promise<Extraction>;
  /** Ends the worker threads. */
  close(): Promise<unknown>;
}

/**
 * The scan workers, one per core but one (that core stays with the event loop), each started on first
 * use and kept; publishers take them in turns (limiter). `refusal` is the 503 an upload would get now.
 */
function workerPool(mode: ScanMode, limits: ScanLimits) {
  const size = Math.max(1, availableParallelism() - 1);
  const workerLimits = {
    timeoutMs: limits.timeoutMs ?? SCAN_TIMEOUT_MS,
    maxOldGenerationSizeMb: limits.maxOldGenerationSizeMb ?? 512,
  };
  const workers = Array.from({ length: size }, () => new ScanWorker(workerLimits));
  const idle = [...workers];
  const perPublisher = limits.perPublisher ?? SCAN_QUEUE_PER_PUBLISHER;
  const queue = limiter(size, limits.queueMax ?? SCAN_QUEUE_MAX, perPublisher);
  const refusal = (publisherId: string) =>
    mode === 'off'
      ? undefined
      : queue.full()
        ? scanQueueFull()
        : queue.fullFor(publisherId)
          ? busy(publisherScanQueueFull(publisherId, perPublisher))
          : undefined;
  const withWorker = <T>(publisherId: string, task: (worker: ScanWorker) => Promise<T>) =>
    queue.run(publisherId, async () => {
      const worker = idle.pop()!;
      try {
        return await task(worker);
      } finally {
        idle.push(worker);
      }
    });
  const close = () => Promise.all(workers.map((worker) => worker.stop()));
  return { refusal, withWorker, close };
}

/** A small set whose every file the text gate passes over (INLINE_GATE_BYTES): it has no findings, no worker needed. */
const quietInline = async (scannable: ArchiveEntry[]) =>
  scannable.every((entry) => entry.data) &&
  scannable.reduce((sum, entry) => sum + entry.size, 0) <= INLINE_GATE_BYTES &&
  !(await anyMayFind(scannable));

/** What a finished scan means for the version under `mode` (UploadScan). */
function uploadScanOf(report: ScanReport, mode: ScanMode): UploadScan {
  const { findings, omitted, stopped } = report;
  const stopping = findings.filter((f) => !f.suppressed && atLeast(f.severity, SCAN_FLAG_AT));
  const kept = [...findings].sort(bySeverity).slice(0, SCAN_MAX_KEPT_FINDINGS);
  // a file not parsed (too large, or out of parse time) that names what a flagging rule looks for (or too large to read) may hide one
  const unread = (report.skipped ?? []).find((s) => atLeast(s.severity, SCAN_FLAG_AT));
  const flag = stopping.length
    ? flagReason(stopping, !omitted && !stopped)
    : unread
      ? unscannedFlag(unread.file, unread.reason, unread.rules)
      : undefined;
  const complete = !omitted && !stopped && !unread && stopping.every((f) => f.fingerprint);
  return {
    findings: kept,
    flag: mode === 'flag' ? flag : undefined,
    approvable: mode === 'flag' && complete && stopping.length ? stopping : undefined,
  };
}

export function createUploadScanner(
  mode: ScanMode,
  log: (line: string) => void,
  limits: ScanLimits = {},
): UploadScanner {
  const parseLimits = {
    parseMs: limits.parseMs ?? PARSE_LIMITS.parseMs,
    budgetMs: limits.budgetMs ?? PARSE_LIMITS.budgetMs,
  };
  const { refusal, withWorker, close } = workerPool(mode, limits);
  const scan = async (
    zipPath: string,
    scannable: ArchiveEntry[],
    label: string,
    publisherId: string,
    compiled?: string,
    loadable: ArchiveEntry[] = [],
  ): Promise<UploadScan | undefined> => {
    const scanned = await scanSources(zipPath, scannable, label, publisherId, loadable);
    if (scanned && compiled && mode === 'flag') {
      scanned.flag ??= unscannedFlag(compiled, COMPILED_PYTHON);
      // compiled Python no rule reads is never approved with the findings
      scanned.approvable = undefined;
    }
    return scanned;
  };
  const scanSources = async (
    zipPath: string,
    scannable: ArchiveEntry[],
    label: string,
    publisherId: string,
    loadable: ArchiveEntry[],
  ): Promise<UploadScan | undefined> => {
    if (mode === 'off') return undefined;
    if (!scannable.length || (await quietInline(scannable))) return { findings: [] };
    // refused here, not below: a full queue is no failed scan, and the upload may be sent again
    const refused = refusal(publisherId);
    if (refused) throw refused;
    try {
      const report = await withWorker(publisherId, (worker) =>
        scanArchive(worker, zipPath, scannable, { server: true, limits: parseLimits }, loadable),
      );
      return uploadScanOf(report, mode);
    } catch (error) {
      // A crash or a timeout: the upload stands and the server goes on (the worker is replaced on the next
      // scan). Nothing is known of the archive, so no findings are kept; under `flag` an admin must look.
      // Everyone reads status_reason: it says what happened, the error itself (paths) stays in the log.
      log(`scan of ${label} failed: ${(error as Error).message}`);
      const why = error instanceof ScanTimeout ? error.message : 'the scanner stopped';
      return { flag: mode === 'flag' ? `scan: could not finish (${why}); an admin must review it` : undefined };
    }
  };
  const classes = async (
    zipPath: string,
    scannable: ArchiveEntry[],
    nodeId: string,
    publisherId: string,
  ): Promise<Extraction> => {
    try {
      return await withWorker(publisherId, (worker) => archiveClasses(worker, zipPath, scannable, nodeId));
    } catch (error) {
      log(`node-class extraction of ${nodeId} failed: ${(error as Error).message}`);
      const why = error instanceof ScanTimeout ? error.message : 'the extraction stopped';
      return { status: 'failed', reason: `could not finish (${why})`, classes: [] };
    }
  };
  return { scan, refusal, classes, close };
}
