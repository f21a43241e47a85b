// What `nodereg scan` keeps between runs: each file's scan, by the SHA-256 of its content, its path, the
// scanner's version (version.ts) and, for a module that imports from its package, the content of the modules
// it imports relatively, and of those they import in turn (the resolution layer reads those). One JSON file
// per project root under the user's cache; a run keeps only the entries it used, so it stays the size of the
// project's results.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCAN_RULE_IDS, SCAN_SEVERITIES } from '../contract/limits.js';
import { asRead } from './gate.js';
import { relativeImports } from './resolve/package.js';
import type { FileScan } from './scanner.js';
import { scannerVersion, VERSION_FILE } from './version.js';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** A version as scannerVersion writes it: a SHA-256, in hex. */
const VERSION = /^[0-9a-f]{64}$/;
let version: string | null | undefined;
/**
 * The scanner's version (version.ts), or null when it is not known. From the sources (tests, tsx) it is
 * computed; the built CLI reads the one the build wrote beside its bundle, and has none when that file is
 * missing or holds no version: its chunks are not the sources the version is made of, and a version that
 * is not the scanner's (empty, or any text) would match the caches of other builds.
 */
function currentVersion(): string | null {
  if (version !== undefined) return version;
  if (import.meta.url.endsWith('.ts'))
    return (version = scannerVersion(fileURLToPath(new URL('../..', import.meta.url))));
  let written = '';
  try {
    written = readFileSync(new URL(`../${VERSION_FILE}`, import.meta.url), 'utf8').trim();
  } catch {
    // missing or unreadable: no version
  }
  return (version = VERSION.test(written) ? written : null);
}

/** The cache file of a project root: `$XDG_CACHE_HOME/nodereg/scan/…`, else `~/.cache/nodereg/scan/…`. */
export function cacheFileFor(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(base, 'nodereg', 'scan', `${sha256(root).slice(0, 24)}.json`);
}

interface Stored {
  version: string;
  entries: Record<string, FileScan>;
}

const RULE_IDS = new Set<string>(SCAN_RULE_IDS);
const SEVERITIES = new Set<string>(SCAN_SEVERITIES);
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const isLine = (value: unknown) => Number.isInteger(value);

function isFinding(value: unknown): boolean {
  return (
    isRecord(value) &&
    RULE_IDS.has(value.rule as string) &&
    SEVERITIES.has(value.severity as string) &&
    [value.file, value.message, value.hint].every((text) => typeof text === 'string') &&
    isLine(value.line) &&
    isLine(value.column)
  );
}

/**
 * Whether a stored entry has the shape of a file's scan: the cache is a file the user may edit or a disk
 * may damage, and a scan read from it must be one the report can be made of.
 */
function isFileScan(value: unknown): value is FileScan {
  if (!isRecord(value) || !Array.isArray(value.findings) || !Array.isArray(value.stopped)) return false;
  if (typeof value.omitted !== 'number' || value.unparsed !== undefined) return false;
  const loads = value.loads ?? [];
  return (
    value.findings.every(isFinding) &&
    value.stopped.every((rule) => RULE_IDS.has(rule)) &&
    Array.isArray(loads) &&
    loads.every((load) => isRecord(load) && typeof load.path === 'string' && isLine(load.line))
  );
}

export class ScanCache {
  private readonly used = new Map<string, FileScan>();
  private changed = false;

  private constructor(
    private readonly file: string,
    private readonly entries: Record<string, FileScan>,
    private readonly version: string,
  ) {}

  /**
   * The cache at `file`; empty when it is missing, unreadable or of another scanner. None when the
   * scanner's version is not known (every file is scanned, nothing kept).
   */
  static open(file: string): ScanCache | undefined {
    const current = currentVersion();
    if (!current) return undefined;
    try {
      const stored: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (isRecord(stored) && stored.version === current && isRecord(stored.entries)) {
        // an entry of another shape (edited, damaged) is left out: its file is scanned anew
        const entries: Record<string, FileScan> = {};
        for (const [key, scan] of Object.entries(stored.entries)) if (isFileScan(scan)) entries[key] = scan;
        return new ScanCache(file, entries, current);
      }
    } catch {
      // missing or damaged: scanned anew
    }
    return new ScanCache(file, {}, current);
  }

  /**
   * The keys of a scan's files, by path: `texts` are their contents; `server` as ScanTextOptions.server.
   * A module is keyed with the modules of the package it imports relatively, and those they import in
   * turn (what the resolution layer may read for it).
   */
  keys(texts: Map<string, Buffer>, server: boolean): Map<string, string> {
    const own = new Map([...texts].map(([path, text]) => [path, sha256(text)]));
    const has = (path: string) => texts.has(path);
    const imports = new Map<string, string[]>();
    const importsOf = (path: string) => {
      let found = imports.get(path);
      if (!found) {
        found = /\.pyw?$/i.test(path)
          ? relativeImports(path, asRead('python', texts.get(path)!.toString('utf8')), has)
          : [];
        imports.set(path, found);
      }
      return found;
    };
    const keys = new Map<string, string>();
    for (const path of texts.keys()) {
      const reached = new Set([path]);
      for (const stack = [path]; stack.length; )
        for (const next of importsOf(stack.pop()!)) if (!reached.has(next)) stack.push(next), reached.add(next);
      const modules = [...reached].sort().map((p) => `${p}\0${own.get(p)}`);
      keys.set(path, sha256(`${this.version}\0${server}\0${modules.join('\n')}`));
    }
    return keys;
  }

  get(key: string): FileScan | undefined {
    const hit = this.entries[key];
    if (hit) this.used.set(key, hit);
    return hit;
  }

  /** Keeps a file's scan; one whose parse was given up (out of time or work) is not kept. */
  put(key: string, scan: FileScan): void {
    if (scan.unparsed) return;
    this.used.set(key, scan);
    this.changed = true;
  }

  /** Writes the entries this run used (best effort: a cache that cannot be written is no error). */
  save(): void {
    if (!this.changed && this.used.size === Object.keys(this.entries).length) return;
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      const temp = `${this.file}.${process.pid}.tmp`;
      const stored: Stored = { version: this.version, entries: Object.fromEntries(this.used) };
      writeFileSync(temp, JSON.stringify(stored), { mode: 0o600 });
      renameSync(temp, this.file);
    } catch {
      // a read-only or full disk: the next run scans anew
    }
  }
}
