// A zip shipped inside the node that its code puts on sys.path (sys.path.insert/append, site.addsitedir)
// or imports from (zipimport.zipimporter): Python imports its .py members as modules, so the scan reads
// them as it reads the node's own, reported as `lib.zip/mod.py`. Bounded: its size, its member count and
// the bytes of its members; past a bound, or a zip put on the path from inside it (nesting deeper than
// one), the scan says so with an info finding, never silently.
import yauzl from 'yauzl';
import type { Finding } from '../contract/scan.js';
import { COMPILED_PYTHON, SCAN_FLAG_AT } from '../shared/scan.js';
import { fingerprintOf } from './fingerprint.js';
import { isCompiledPython, languageOf } from './languages.js';

export { isZip } from './languages.js';
import { rules } from './rules/index.js';
import type { Tally } from './run.js';
import type { FileScan } from './scanner.js';

const MiB = 1024 * 1024;
/** What the scan reads of one nested zip at most. */
export const NESTED_ZIP = { maxBytes: 4 * MiB, maxMembers: 1000, maxUnpacked: 16 * MiB };

const BOUND = rules.find((rule) => rule.id === 'not-fully-analysed')!;

/** The info finding that says how far the scan read a nested zip (on its first line: a zip has no lines). */
export function notFullyRead(file: string, reason: string): Finding {
  const message = `not fully analysed: ${reason}`;
  return {
    rule: BOUND.id,
    severity: BOUND.severity,
    file,
    line: 1,
    column: 1,
    message,
    hint: 'ship the code as .py files of the node instead of a zip put on sys.path',
    fingerprint: fingerprintOf(BOUND.id, message, ''),
  };
}

/** What one file of the zip gives the scan, by its path `lib.zip/mod.py`. */
export type ScanMember = (path: string, text: string) => Promise<FileScan>;

/** The scan of a nested zip: each .py member's, and what the bounds left out. */
export interface ZipScan {
  files: { path: string; scan: FileScan }[];
  /** Compiled Python among its members (COMPILED_PYTHON). */
  compiled: string[];
  bounds: Finding[];
}

/**
 * Reads the zip (`size` bytes; read whole only when at most NESTED_ZIP.maxBytes) and scans its Python
 * members with `scanMember`. A zip that does not open, an encrypted member or one of another compression
 * is a bound, not an error.
 */
export async function scanNestedZip(
  zipPath: string,
  size: number,
  read: () => Buffer,
  scanMember: ScanMember,
): Promise<ZipScan> {
  const out: ZipScan = { files: [], compiled: [], bounds: [] };
  const bound = (reason: string) => out.bounds.push(notFullyRead(zipPath, `${zipPath} ${reason}`));
  if (size > NESTED_ZIP.maxBytes) {
    bound(`is put on the import path but is ${size} bytes, over the ${NESTED_ZIP.maxBytes} bytes the scan reads`);
    return out;
  }
  let zip: yauzl.ZipFile | undefined;
  try {
    zip = await yauzl.fromBufferPromise(read(), { lazyEntries: true, validateEntrySizes: true });
    if (zip.entryCount > NESTED_ZIP.maxMembers)
      bound(`holds ${zip.entryCount} members: only the first ${NESTED_ZIP.maxMembers} were read`);
    let unpacked = 0;
    for (let i = 0, entry = await nextEntry(zip); entry; entry = await nextEntry(zip)) {
      if (++i > NESTED_ZIP.maxMembers) break;
      const name = entry.fileName;
      const path = `${zipPath}/${name}`;
      if (isCompiledPython(name)) out.compiled.push(path);
      if (languageOf(name) !== 'python') continue;
      if (entry.isEncrypted()) {
        bound(`holds ${name}, encrypted: the scan cannot read it`);
        continue;
      }
      unpacked += entry.uncompressedSize;
      if (unpacked > NESTED_ZIP.maxUnpacked) {
        bound(
          `unpacks to more than ${NESTED_ZIP.maxUnpacked} bytes of Python: the members from ${name} on were not read`,
        );
        break;
      }
      const text = (await readAll(await zip.openReadStreamPromise(entry))).toString('utf8');
      const scan = await scanMember(path, text);
      out.files.push({ path, scan });
      for (const load of scan.loads ?? [])
        bound(`holds ${name}, which runs ${load.path} (line ${load.line}): code nested that deep is not followed`);
    }
  } catch (error) {
    bound(`could not be read as a zip: ${(error as Error).message}`.slice(0, 300));
  } finally {
    zip?.close();
  }
  return out;
}

function nextEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    const done = () => {
      zip.off('entry', onEntry).off('end', onEnd).off('error', onError);
    };
    const onEntry = (entry: yauzl.Entry) => (done(), resolve(entry));
    const onEnd = () => (done(), resolve(undefined));
    const onError = (error: Error) => (done(), reject(error));
    zip.on('entry', onEntry).on('end', onEnd).on('error', onError);
    zip.readEntry();
  });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A nested zip's scan in a scan's tally: its members' findings, its compiled Python as skipped, its bounds. */
export function addZipScan(tally: Tally, zip: ZipScan): void {
  // what a member loads in turn was reported as a bound (nesting depth 1)
  for (const { path, scan } of zip.files) tally.add(path, { ...scan, loads: undefined });
  for (const file of zip.compiled) tally.skipped.push({ file, reason: COMPILED_PYTHON, severity: SCAN_FLAG_AT });
  tally.findings.push(...zip.bounds);
}
