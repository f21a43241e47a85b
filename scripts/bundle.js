// `npm run build`: bundles the CLI with Rolldown into dist/ (tsc only type-checks). Code splitting keeps
// each command, the server, the packer and the prompts in lazy chunks, so a command loads only the
// code it runs: one file read per chunk instead of hundreds of module files resolved one by one.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { rolldown } from 'rolldown';
import { bundlePackageJson, inputOptions, outputOptions } from './bundle-options.js';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const dist = resolve(root, 'dist');

rmSync(dist, { recursive: true, force: true });

// The CLI, the packer's deflate worker, the scan worker, and the modules that the benchmarks and the memory tests
// load on their own; each keeps its path under dist/ (dist/cli/main.js is what bin/nodereg.js runs, the one
// entry of the CLI: each command is a chunk it requires when that command runs).
const entries = [
  'cli/main',
  'package/files',
  'package/zip',
  // the packer's worker thread, started by path (src/package/zip.ts finds it at dist/package/deflate-worker.js)
  'package/deflate-worker',
  'client/index',
  'contract/registry',
  'server/store/db',
  'server/store/sqlite-registry-store',
  // bench/seed-store.js writes each node's words as the store does
  'server/store/search-words',
  // the registry server, which test/server/child-server.js runs in a process of its own
  'server/index',
  // the scan's worker thread, started by path (src/scan/threads.ts finds it at dist/scan/worker.js)
  'scan/worker',
  // run by this script once built, to write the scanner's version (the scan cache's key) into dist/
  'scan/version',
  // the AI proxy's body worker, started by path (src/server/proxy/bodies.ts finds it at
  // dist/server/proxy/body-worker.js)
  'server/proxy/body-worker',
];

const bundle = await rolldown({
  cwd: root,
  input: Object.fromEntries(entries.map((entry) => [entry, `src/${entry}.ts`])),
  ...inputOptions,
});
await bundle.write({ dir: dist, ...outputOptions });
await bundle.close();
writeFileSync(resolve(dist, 'package.json'), bundlePackageJson);

// The scanner's version and its WebAssembly files, as the built src/scan/version.ts names them.
const { scannerVersion, RUNTIME, GRAMMARS, VERSION_FILE } = require(resolve(dist, 'scan/version.js'));
// the scan cache's key (src/scan/cache.ts reads it): a hash of the scanner's sources, not of the whole bundle
writeFileSync(resolve(dist, VERSION_FILE), `${scannerVersion(root)}\n`);
// beside the bundle (src/scan/scanner.ts looks in dist/wasm first), so that publish and scan run from a packed
// tarball with Node alone (the README's CI recipe)
mkdirSync(resolve(dist, 'wasm'));
for (const file of [RUNTIME, ...Object.values(GRAMMARS)]) {
  copyFileSync(require.resolve(file), resolve(dist, 'wasm', file.split('/').pop()));
}
