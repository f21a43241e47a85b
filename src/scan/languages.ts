// Which files the scanner reads: by extension. Small on purpose, so that the server can count an
// archive's scannable entries without loading the scanner.
import type { ScanLanguage } from './rule.js';

/** The language of a file, by its extension; undefined for files no rule reads. */
export function languageOf(path: string): ScanLanguage | undefined {
  if (/\.pyw?$/i.test(path)) return 'python';
  if (/\.[cm]?js$/i.test(path)) return 'javascript';
  if (/(?:^|\/)requirements[^/]*\.(?:txt|in)$/i.test(path)) return 'requirements';
  if (/\.pth$/i.test(path)) return 'pth';
  return undefined;
}

/**
 * Compiled Python, which no rule can read: Python runs a `__pycache__` file compiled with an unchecked
 * hash in place of its source without looking at the source, and a `.pyc` beside no source at all.
 */
export const isCompiledPython = (path: string) => /\.py[co]$/i.test(path);

/** A zip, which the scan reads inside when the node's code puts it on sys.path (nested-zip.ts). */
export const isZip = (path: string) => /\.zip$/i.test(path);
