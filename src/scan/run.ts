// Running the scanner over a file set (what `pack` would ship) or an uploaded archive. Large sets
// are split across worker threads, one per core; the registry scans each archive in a worker so
// its event loop never waits for a parse.
import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { availableParallelism } from 'node:os';
import { SCAN_SEVERITIES } from '../contract/limits.js';
import {
  COMPILED_PYTHON,
  notParsed,
  SCAN_BUDGET_MS,
  SCAN_BUDGET_UNITS,
  SCAN_FLAG_AT,
  SCAN_GATE_MAX_BYTES,
  SCAN_MAX_FILE_BYTES,
  SCAN_MAX_REPORTED_FINDINGS,
  SCAN_PARSE_MS,
  SCAN_PARSE_UNITS,
} from '../shared/scan.js';
import type { Finding, ScanReport, SkippedFile } from '../contract/scan.js';
import type { ArchiveEntry, PartialReport, ScanInput } from './jobs.js';
import { inWorker, type ScanWorker } from './threads.js';
import { isCompiledPython, languageOf } from './languages.js';
import { ScanCache } from './cache.js';
import { addZipScan, isZip, scanNestedZip } from './nested-zip.js';
import { PackageModules } from './resolve/package.js';
import {
  admittedRules,
  gateOf,
  Scanner,
  scanLines,
  unscanned,
  type FileScan,
  type ScanTextOptions,
} from './scanner.js';
import type { Extraction } from './node-classes/extract.js';

export type { ArchiveEntry, PartialReport, ScanInput, ScanJob } from './jobs.js';

const SEVERITY_RANK = new Map(SCAN_SEVERITIES.map((s, i) => [s, i]));
/** The most severe first, unsuppressed before suppressed, then in file, line and column order. */
const byWeight = (a: Finding, b: Finding) =>
  SEVERITY_RANK.get(b.severity)! - SEVERITY_RANK.get(a.severity)! ||
  Number(Boolean(a.suppressed)) - Number(Boolean(b.suppressed)) ||
  inFileOrder(a, b);
const inFileOrder = (a: Finding, b: Finding) =>
  a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule);

/**
 * Findings as files are scanned, at most SCAN_MAX_REPORTED_FINDINGS of them kept (the most severe, so a
 * high finding is never dropped for a lower one), the others counted: memory stays bounded however
 * many files find how much.
 */
export class Tally {
  findings: Finding[] = [];
  suppressed = 0;
  omitted = 0;
  stopped: NonNullable<ScanReport['stopped']> = [];
  skipped: SkippedFile[] = [];
  loads: NonNullable<PartialReport['loads']> = [];

  add(file: string, scan: FileScan): void {
    if (scan.unparsed) this.skipped.push(scan.unparsed);
    for (const load of scan.loads ?? [])
      this.loads.push({ path: posix.normalize(posix.join(posix.dirname(file), load.path)), by: file, line: load.line });
    for (const finding of scan.findings) this.findings.push(finding);
    this.suppressed += scan.findings.filter((f) => f.suppressed).length + scan.omitted;
    this.omitted += scan.omitted;
    for (const rule of scan.stopped) this.stopped.push({ file, rule });
    if (this.findings.length >= 2 * SCAN_MAX_REPORTED_FINDINGS) this.trim();
  }

  merge(part: PartialReport): void {
    this.findings.push(...part.findings);
    this.suppressed += part.suppressed;
    this.omitted += part.omitted;
    this.stopped.push(...part.stopped);
    this.trim();
  }

  trim(): void {
    if (this.findings.length <= SCAN_MAX_REPORTED_FINDINGS) return;
    this.findings.sort(byWeight);
    this.omitted += this.findings.length - SCAN_MAX_REPORTED_FINDINGS;
    this.findings.length = SCAN_MAX_REPORTED_FINDINGS;
  }

  report(files: number): PartialReport {
    this.trim();
    return {
      findings: this.findings,
      skipped: this.skipped,
      files,
      suppressed: this.suppressed,
      omitted: this.omitted,
      stopped: this.stopped,
      loads: this.loads,
    };
  }
}

/** Below this many bytes of source a worker costs more than it saves. */
const IN_THREAD_BYTES = 1024 * 1024;

let loaded: Promise<Scanner> | undefined;
/** One scanner per thread, loaded on first use (the grammars take ~30 ms). */
export const scanner = () => (loaded ??= Scanner.load());

/**
 * The Python modules of a scan's files, for relative imports (ScanTextOptions.package); parsed with the
 * thread's scanner once it is loaded. dispose() after the scan.
 */
export function packageOf(files: { path: string; read: () => string }[]): PackageModules {
  let ready: Scanner | undefined;
  void scanner().then((s) => (ready = s));
  return new PackageModules(
    new Map(files.filter((f) => /\.pyw?$/i.test(f.path)).map((f) => [f.path, f.read])),
    (text) => ready?.parsePython(text),
  );
}

/** The parse limits of the registry and of `nodereg scan` alike, so that both say the same of a file. */
export const PARSE_LIMITS = {
  parseMs: SCAN_PARSE_MS,
  budgetMs: SCAN_BUDGET_MS,
  parseUnits: SCAN_PARSE_UNITS,
  budgetUnits: SCAN_BUDGET_UNITS,
};

/**
 * A file too large to parse is read (up to SCAN_GATE_MAX_BYTES) for the names the rules look for: one
 * that names none has no findings and is not listed (undefined); padding a file past the limit hid its
 * os.system call.
 */
export const tooLarge = (file: string, size: number, read: () => string): SkippedFile | undefined =>
  unscanned(file, notParsed.size(size), size <= SCAN_GATE_MAX_BYTES ? admittedRules(file, read()) : undefined);

/**
 * Scans one file's text: the parser (WebAssembly) is loaded only once a file's text admits a rule or
 * names what the resolution layer follows, so a small node whose files name nothing risky costs its
 * reads and a few regular expressions. Requirements and .pth files are read by line.
 */
export async function scanOne(path: string, text: string, options: ScanTextOptions, until?: number): Promise<FileScan> {
  const language = options.language ?? languageOf(path);
  if (language === 'requirements' || language === 'pth') return scanLines(path, text, language);
  if (!language) return { findings: [], stopped: [], omitted: 0 };
  const gate = gateOf(path, text, language, options.package);
  if (!gate.admitted.length && !gate.resolving) return { findings: [], stopped: [], omitted: 0 };
  return (await scanner()).scanFile(path, text, options, gate, until);
}

/** When a scan that starts now ends its parses (ScanTextOptions.limits). */
export const scanEnd = (options: ScanTextOptions) =>
  options.limits ? Date.now() + options.limits.budgetMs : undefined;

/**
 * Scans files read from disk, in this thread: all of them, or those it takes from `next`. `all`: the
 * whole set, for relative imports, when `files` is part of it; `keep`: each file's scan is given back
 * too (for the cache).
 */
export async function scanFilesHere(
  files: { path: string; abs: string }[],
  options: ScanTextOptions,
  next?: SharedArrayBuffer,
  until = scanEnd(options),
  { all = files, keep = false }: { all?: { path: string; abs: string }[]; keep?: boolean } = {},
): Promise<PartialReport> {
  const tally = new Tally();
  const scans: NonNullable<PartialReport['scans']> = [];
  const counter = next && new Int32Array(next);
  const modules = packageOf(all.map((f) => ({ path: f.path, read: () => readFileSync(f.abs, 'utf8') })));
  const spent = { units: 0 };
  try {
    for (let i = 0; i < files.length; i++) {
      const file = files[counter ? Atomics.add(counter, 0, 1) : i];
      if (!file) break;
      const text = readFileSync(file.abs, 'utf8');
      const scan = await scanOne(file.path, text, { ...options, package: modules, spent }, until);
      tally.add(file.path, scan);
      if (keep) scans.push({ path: file.path, scan });
    }
  } finally {
    modules.dispose();
  }
  return keep ? { ...tally.report(files.length), scans } : tally.report(files.length);
}

/** The report of several partial ones: findings in file, line and column order. */
export function mergeReports(parts: PartialReport[], files: number): ScanReport {
  const tally = new Tally();
  for (const part of parts) tally.merge(part);
  const findings = tally.findings.sort(inFileOrder);
  const skipped = parts.flatMap((p) => p.skipped).sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const { suppressed, omitted, stopped } = tally;
  return {
    findings,
    files,
    suppressed,
    ...(skipped.length ? { skipped } : {}),
    ...(omitted ? { omitted } : {}),
    ...(stopped.length
      ? { stopped: stopped.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.rule.localeCompare(b.rule))) }
      : {}),
  };
}

/**
 * Scans a file set: the files of a language the rules read, each up to SCAN_MAX_FILE_BYTES. Sets
 * larger than ~1 MiB of source are shared by `threads` workers (default: one per core). `cache`: the
 * file of scans kept between runs (cache.ts); a file whose key it holds is not scanned again.
 */
export async function scanFiles(
  files: readonly ScanInput[],
  options: ScanTextOptions & { threads?: number; cache?: string } = {},
): Promise<ScanReport> {
  const large = new Tally();
  const wanted: ScanInput[] = [];
  for (const file of files) {
    // as the registry does (validateZip): Python may run it in place of its source, and no rule reads it
    if (isCompiledPython(file.path))
      large.skipped.push({ file: file.path, reason: COMPILED_PYTHON, severity: SCAN_FLAG_AT });
    if (!languageOf(file.path)) continue;
    if (file.size > SCAN_MAX_FILE_BYTES) {
      const unparsed = tooLarge(file.path, file.size, () => readFileSync(file.abs, 'utf8'));
      if (unparsed) large.skipped.push(unparsed);
    } else wanted.push(file);
  }
  // the registry's limits unless told otherwise: a file whose parse runs out of time there does here too
  const textOptions: ScanTextOptions = { server: options.server, limits: options.limits ?? PARSE_LIMITS };
  const cache = options.cache ? ScanCache.open(options.cache) : undefined;
  const { hits, keys, misses } = cachedScans(cache, wanted, Boolean(options.server));
  const parts = [hits.report(0), ...(await scanSet(misses, wanted, textOptions, options.threads, Boolean(cache)))];
  for (const { path, scan } of parts.flatMap((p) => p.scans ?? [])) cache?.put(keys.get(path)!, scan);
  cache?.save();
  parts.push(await scanLoaded(parts, files, textOptions));
  return mergeReports([...parts, large.report(0)], files.length);
}

/** The files' scans the cache holds (in a tally), the cache keys, and the files left to scan. */
function cachedScans(cache: ScanCache | undefined, wanted: ScanInput[], server: boolean) {
  const hits = new Tally();
  if (!cache) return { hits, keys: new Map<string, string>(), misses: wanted };
  const keys = cache.keys(new Map(wanted.map((f) => [f.path, readFileSync(f.abs)])), server);
  const misses: ScanInput[] = [];
  for (const file of wanted) {
    const hit = cache.get(keys.get(file.path)!);
    if (hit) hits.add(file.path, hit);
    else misses.push(file);
  }
  return { hits, keys, misses };
}

/**
 * Scans `files` (part of `all`, for relative imports) here or, past IN_THREAD_BYTES of source, in
 * `threads` workers; `keep`: each file's scan given back too.
 */
async function scanSet(
  files: ScanInput[],
  all: ScanInput[],
  options: ScanTextOptions,
  threads = availableParallelism(),
  keep = false,
): Promise<PartialReport[]> {
  const until = scanEnd(options);
  const bytes = files.reduce((sum, f) => sum + f.size, 0);
  const used = Math.max(1, Math.min(threads, Math.ceil(bytes / IN_THREAD_BYTES)));
  const set = all.length === files.length ? undefined : all.map((f) => ({ path: f.path, abs: f.abs }));
  if (used === 1) return [await scanFilesHere(files, options, undefined, until, { all: set, keep })];
  // Largest first, each worker taking the next file when it is done with one: they finish together
  // even when the machine gives one of them less time.
  const queue = [...files].sort((a, b) => b.size - a.size).map((f) => ({ path: f.path, abs: f.abs }));
  const next = new SharedArrayBuffer(4);
  return Promise.all(
    Array.from({ length: used }, () => inWorker({ kind: 'files', files: queue, options, next, until, all: set, keep })),
  );
}

/**
 * The shipped files that scanned files run as code (code-in-data), read as Python, and the zips they put
 * on sys.path, read inside: each once, even when several load it; those the rules read anyway (.py) are
 * not read twice.
 */
async function scanLoaded(
  parts: PartialReport[],
  files: readonly ScanInput[],
  options: ScanTextOptions,
): Promise<PartialReport> {
  const tally = new Tally();
  const byPath = new Map(files.map((f) => [f.path, f]));
  const done = new Set<string>();
  for (const { path } of parts.flatMap((p) => p.loads ?? [])) {
    const file = byPath.get(path);
    if (!file || done.has(path) || languageOf(path) === 'python') continue;
    done.add(path);
    if (isZip(path)) {
      const read = () => readFileSync(file.abs);
      addZipScan(tally, await scanNestedZip(path, file.size, read, (member, text) => scanOne(member, text, options)));
    } else if (file.size <= SCAN_MAX_FILE_BYTES)
      tally.add(path, await scanOne(path, readFileSync(file.abs, 'utf8'), { ...options, language: 'python' }));
  }
  return tally.report(0);
}

/**
 * The bytes the check kept, in one new buffer to transfer to the worker: never the entries' own, which
 * may be views of memory others use (Buffer's pool).
 */
function packTexts(entries: ArchiveEntry[]): { sent: ArchiveEntry[]; texts: ArrayBuffer } {
  const texts = new Uint8Array(entries.reduce((sum, entry) => sum + (entry.data?.length ?? 0), 0));
  let at = 0;
  const sent = entries.map(({ data, ...entry }) => {
    if (!data) return entry;
    texts.set(data, at);
    at += data.length;
    return { ...entry, at: at - data.length };
  });
  return { sent, texts: texts.buffer };
}

/**
 * Scans the entries of an uploaded archive (already checked by the server) in `worker`, and those of
 * `loadable` that a scanned entry runs as code, as Python.
 */
export async function scanArchive(
  worker: ScanWorker,
  zip: string,
  entries: ArchiveEntry[],
  options: ScanTextOptions = {},
  loadable: ArchiveEntry[] = [],
): Promise<ScanReport> {
  const { sent, texts } = packTexts(entries);
  const part = await worker.run(
    {
      kind: 'entries',
      zip,
      entries: sent,
      options: { server: options.server, limits: options.limits },
      texts,
      loadable: loadable.map(({ data: _kept, ...entry }) => entry),
    },
    [texts],
  );
  // The parser's WebAssembly memory grows with the largest file it parsed and never shrinks (a 4 MiB
  // file left the server at ~1 GB): a worker that read a large file is ended, the next job starts anew.
  if (entries.some((entry) => entry.size > IN_THREAD_BYTES)) await worker.stop();
  return mergeReports([part], part.files);
}

/** The node classes of an uploaded archive's Python files, extracted in `worker` (never run). */
export async function archiveClasses(
  worker: ScanWorker,
  zip: string,
  entries: ArchiveEntry[],
  packageName: string,
): Promise<Extraction> {
  const { sent, texts } = packTexts(entries.filter((entry) => entry.path.endsWith('.py')));
  const extraction = await worker.run<Extraction>({ kind: 'classes', zip, entries: sent, packageName, texts }, [texts]);
  if (entries.some((entry) => entry.size > IN_THREAD_BYTES)) await worker.stop();
  return extraction;
}
