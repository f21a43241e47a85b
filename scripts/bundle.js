// `npm run build`: bundles the CLI with esbuild into dist/ (tsc only type-checks). Code splitting keeps
// each command, the server, the packer and the prompts in lazy chunks, so a command loads only the
// code it runs: one file read per chunk instead of hundreds of module files resolved one by one.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const dist = resolve(root, 'dist');
rmSync(dist, { recursive: true, force: true });

await build({
  absWorkingDir: root,
  // The CLI, the packer's deflate worker, the scan worker, and the modules that the benchmarks and the memory tests
  // load on their own; each keeps its path under dist/ (dist/cli/main.js is what bin/nodereg.js runs).
  entryPoints: [
    'src/cli/main.ts',
    'src/package/files.ts',
    'src/package/zip.ts',
    // the packer's worker thread, started by path (src/package/zip.ts finds it at dist/package/deflate-worker.js)
    'src/package/deflate-worker.ts',
    'src/client/index.ts',
    'src/contract/registry.ts',
    'src/server/store/db.ts',
    'src/server/store/sqlite-registry-store.ts',
    // the scan's worker thread, started by path (src/scan/run.ts finds it at dist/scan/worker.js)
    'src/scan/worker.ts',
  ],
  outbase: 'src',
  outdir: dist,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // A native addon loads files next to its own package: it stays in node_modules (only `serve` needs it).
  external: ['better-sqlite3'],
  // CommonJS packages inside an ESM bundle call require() for Node's built-ins.
  banner: { js: "import { createRequire as __nodereg_createRequire } from 'node:module'; const require = __nodereg_createRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});

// The command lines quick-args.ts takes (plain reads such as `node show ID`) run from one CommonJS file
// that bin/nodereg.js requires: no ES module loader, no chunk files to resolve, no commander or zod.
// bin/nodereg.js asks quick-args.cjs (a few hundred bytes) first, so other commands do not load it.
await build({
  absWorkingDir: root,
  entryPoints: { 'cli/quick': 'src/cli/quick-main.ts', 'cli/quick-args': 'src/cli/quick-args.ts' },
  outdir: dist,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.19',
  // loaded only by what a quick command never does (prompts)
  external: ['@inquirer/prompts'],
  minifyWhitespace: true,
  legalComments: 'none',
  logLevel: 'warning',
});

// The scanner's WebAssembly files, beside the bundle (src/scan/scanner.ts looks in dist/wasm first), so that
// publish and scan run from a packed tarball with Node alone (the README's CI recipe).
const require = createRequire(import.meta.url);
mkdirSync(resolve(dist, 'wasm'));
for (const file of ['web-tree-sitter/web-tree-sitter.wasm', 'tree-sitter-python/tree-sitter-python.wasm', 'tree-sitter-javascript/tree-sitter-javascript.wasm']) {
  copyFileSync(require.resolve(file), resolve(dist, 'wasm', file.split('/').pop()));
}
