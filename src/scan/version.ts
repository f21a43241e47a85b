// The scanner's version, part of every scan cache key (cache.ts): one hash of the scanner's code, which is
// every file under src/scan, every module of ours they import (followed through relative imports, so the
// scanner's words and tuning in src/shared and the rule ids in src/contract count, and nothing else), the
// releases of the packages they import, and the WebAssembly runtime and grammars it parses with.
// `npm run build` (scripts/bundle.js) writes it into dist/ for the bundle to read: the bundle's chunks hold
// the scanner mixed with every other command, and hashing all of them would cost each scan a read of the
// whole bundle.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import type { ParsedLanguage } from './rule.js';

/** The WebAssembly files the scanner loads, by package path (dist/wasm holds copies, scripts/bundle.js). */
export const RUNTIME = 'web-tree-sitter/web-tree-sitter.wasm';
export const GRAMMARS: Record<ParsedLanguage, string> = {
  python: 'tree-sitter-python/tree-sitter-python.wasm',
  javascript: 'tree-sitter-javascript/tree-sitter-javascript.wasm',
};

/** The file of dist/ that holds the built scanner's version. */
export const VERSION_FILE = 'scanner-version';

// a static, re-exported, side-effect or dynamic import of a relative path
const RELATIVE_IMPORT = /\b(?:from|import)\s*\(?\s*'(\.\.?\/[^']+)'/g;
// the same of a package (not a builtin): its name, without a path inside it
const PACKAGE_IMPORT = /\b(?:from|import)\s*\(?\s*'(?!node:)((?:@[\w.-]+\/)?\w[\w.-]*)(?:\/[^']*)?'/g;

/** The source file an import names: the TypeScript module of a `.js` name, else the file itself. */
function sourceOf(path: string): string | undefined {
  const ts = path.replace(/\.js$/, '.ts');
  if (existsSync(ts)) return ts;
  return existsSync(path) ? path : undefined;
}

/**
 * The scanner's files under `src`, by path: src/scan and what it imports of src, directly or not; and the
 * packages those files import, by name.
 */
function scannerFiles(src: string): { files: Map<string, Buffer>; packages: Set<string> } {
  const files = new Map<string, Buffer>();
  const packages = new Set<string>();
  const add = (file: string) => {
    if (files.has(file)) return;
    const text = readFileSync(file);
    files.set(file, text);
    if (!file.endsWith('.ts')) return;
    const source = text.toString('utf8');
    for (const [, name] of source.matchAll(PACKAGE_IMPORT)) packages.add(name);
    for (const [, name] of source.matchAll(RELATIVE_IMPORT)) {
      const target = sourceOf(join(dirname(file), name));
      if (target?.startsWith(`${src}${sep}`)) add(target);
    }
  };
  for (const entry of readdirSync(join(src, 'scan'), { recursive: true, withFileTypes: true }))
    if (entry.isFile()) add(join(entry.parentPath, entry.name));
  return { files, packages };
}

/**
 * The version of the scanner whose sources are in `root`/src and whose packages `root` resolves. A package
 * it imports counts by its package.json (its release: web-tree-sitter runs the queries' predicates in
 * JavaScript, beside its WebAssembly), as Node finds it for src/, in `root`/node_modules.
 */
export function scannerVersion(root: string): string {
  const { files, packages } = scannerFiles(join(root, 'src'));
  const named: [string, Buffer][] = [...files].map(([file, text]) => [relative(root, file).split(sep).join('/'), text]);
  for (const name of packages) {
    // a name that is not installed is text that reads like an import (a rule's example), not one
    const manifest = join(root, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) named.push([`${name}/package.json`, readFileSync(manifest)]);
  }
  const require = createRequire(join(root, 'package.json'));
  for (const wasm of [RUNTIME, ...Object.values(GRAMMARS)]) named.push([wasm, readFileSync(require.resolve(wasm))]);
  const hash = createHash('sha256');
  for (const [name, text] of named.sort(([a], [b]) => (a < b ? -1 : 1)))
    hash.update(`${name}\0${createHash('sha256').update(text).digest('hex')}\n`);
  return hash.digest('hex');
}
