// `npm run build`: bundles the CLI with esbuild into dist/ (tsc only type-checks). Code splitting keeps
// each command, the server, the packer and the prompts in lazy chunks, so a command loads only the
// code it runs: one file read per chunk instead of hundreds of module files resolved one by one.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { trainCodeCache } from './train-code-cache.js';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
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
    // bench/seed-store.js writes each node's words as the store does
    'src/server/store/search-words.ts',
    // the scan's worker thread, started by path (src/scan/run.ts finds it at dist/scan/worker.js)
    'src/scan/worker.ts',
    // the AI proxy's body worker, started by path (src/server/proxy/bodies.ts finds it at dist/server/proxy/body-worker.js)
    'src/server/proxy/body-worker.ts',
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

// The command lines quick-args.ts takes (`node show ID`, a plain `publish`) run from CommonJS files
// that bin/nodereg.js requires: no ES module loader, no chunk files to resolve, no commander.
// bin/nodereg.js asks quick-args.cjs (a few hundred bytes) first, so other commands do not load them.
const commonJs = {
  absWorkingDir: root,
  outdir: dist,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.19',
  minifyWhitespace: true,
  legalComments: 'none',
  logLevel: 'warning',
};
await build({
  ...commonJs,
  entryPoints: { 'cli/quick': 'src/cli/quick-main.ts', 'cli/quick-args': 'src/cli/quick-args.ts' },
  // loaded only by what a quick command never does (prompts)
  external: ['@inquirer/prompts'],
  // every import() a require(): bin/compiled.js runs the bundle as a vm.Script, which has no import()
  supported: { 'dynamic-import': false },
});

// What a publish needs only on some paths stays in bundles of their own beside it (dist/cli/lazy/),
// required when first imported, so that a publish without them neither reads nor compiles them:
// zod, with the schemas that word a manifest's problems and --dry-run's request line, and the parser
// for the files the scan's text gate admits. The build fails if zod gets in another way.
const lazy = {
  resources: 'src/contract/resources.ts',
  operation: 'src/contract/operation.ts',
  // its CommonJS build: an ES module one, turned into CommonJS, would shadow require() with its own
  'web-tree-sitter': require.resolve('web-tree-sitter'),
};
const lazyName = (path) => path.split('/').pop().replace(/\.js$/, '');
const publish = await build({
  ...commonJs,
  entryPoints: { 'cli/quick-publish': 'src/cli/quick-publish.ts' },
  external: ['@inquirer/prompts'],
  // The worker and WebAssembly files are found from import.meta.url (dist/cli/ reaches them as dist/chunks/ does).
  banner: { js: "const __nodereg_module_url = require('node:url').pathToFileURL(__filename).href;" },
  define: { 'import.meta.url': '__nodereg_module_url' },
  // every import() a require(): Node's ES module loader would cost more than what it loads
  supported: { 'dynamic-import': false },
  metafile: true,
  plugins: [
    {
      name: 'lazy',
      setup(build) {
        build.onResolve({ filter: /./ }, (args) =>
          args.kind === 'dynamic-import' && Object.hasOwn(lazy, lazyName(args.path)) ? { path: `./lazy/${lazyName(args.path)}.cjs`, external: true } : undefined,
        );
      },
    },
  ],
});
const zodInPublish = Object.keys(Object.values(publish.metafile.outputs)[0].inputs).filter((input) => input.includes('node_modules/zod/'));
if (zodInPublish.length) throw new Error(`dist/cli/quick-publish.cjs holds zod (${zodInPublish[0]}): import the module that needs it dynamically, and make it lazy in scripts/bundle.js`);
await build({
  ...commonJs,
  entryPoints: Object.entries(lazy).map(([name, path]) => ({ in: path, out: `cli/lazy/${name}` })),
  // each file says which modules it holds (test/launcher/publish-loads.test.ts reads them)
  minifyWhitespace: false,
});

// The scanner's WebAssembly files, beside the bundle (src/scan/scanner.ts looks in dist/wasm first), so that
// publish and scan run from a packed tarball with Node alone (the README's CI recipe).
mkdirSync(resolve(dist, 'wasm'));
for (const file of ['web-tree-sitter/web-tree-sitter.wasm', 'tree-sitter-python/tree-sitter-python.wasm', 'tree-sitter-javascript/tree-sitter-javascript.wasm']) {
  copyFileSync(require.resolve(file), resolve(dist, 'wasm', file.split('/').pop()));
}

// The V8 code cache of the two bundles bin/nodereg.js runs for `node show` and `publish` (bin/compiled.js),
// written by training runs of those commands (scripts/train-code-cache.js).
await trainCodeCache(root, ['cli/quick.cjs', 'cli/quick-publish.cjs'].map((bundle) => resolve(dist, bundle)));
