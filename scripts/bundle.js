// `npm run build`: bundles the CLI with esbuild into dist/ (tsc only type-checks). Code splitting keeps
// each command, the server, the packer and the prompts in lazy chunks, so a command loads only the
// code it runs: one file read per chunk instead of hundreds of module files resolved one by one.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const dist = resolve(root, 'dist');

/**
 * commander requires node:child_process when it loads, to start subcommands that are programs of their
 * own; nodereg has none. That require pulls in net, streams and dgram, which `--version` and `--help`
 * never use: commander gets node:child_process as an object that requires it on first use instead.
 */
const childProcessOnUse = {
  name: 'child-process-on-use',
  setup(build) {
    build.onResolve({ filter: /^node:child_process$/ }, ({ importer }) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(importer)
        ? { path: 'node:child_process', namespace: 'child-process-on-use' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'child-process-on-use' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });",
      loader: 'js',
    }));
  },
};
rmSync(dist, { recursive: true, force: true });

await build({
  absWorkingDir: root,
  // The CLI, the packer's deflate worker, the scan worker, and the modules that the benchmarks and the memory tests
  // load on their own; each keeps its path under dist/ (dist/cli/main.js is what bin/nodereg.js runs, the one
  // entry of the CLI: each command is a chunk it imports when that command runs).
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
    // the registry server, which test/server/child-server.js runs in a process of its own
    'src/server/index.ts',
    // the scan's worker thread, started by path (src/scan/threads.ts finds it at dist/scan/worker.js)
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
  banner: {
    js: "import { createRequire as __nodereg_createRequire } from 'node:module'; const require = __nodereg_createRequire(import.meta.url);",
  },
  legalComments: 'none',
  plugins: [childProcessOnUse],
  logLevel: 'warning',
});

// The scanner's WebAssembly files, beside the bundle (src/scan/scanner.ts looks in dist/wasm first), so that
// publish and scan run from a packed tarball with Node alone (the README's CI recipe).
mkdirSync(resolve(dist, 'wasm'));
for (const file of [
  'web-tree-sitter/web-tree-sitter.wasm',
  'tree-sitter-python/tree-sitter-python.wasm',
  'tree-sitter-javascript/tree-sitter-javascript.wasm',
]) {
  copyFileSync(require.resolve(file), resolve(dist, 'wasm', file.split('/').pop()));
}
