// `npm run build`: bundles the CLI with esbuild into dist/ (tsc only type-checks). Code splitting keeps
// each command, the server, the packer and the prompts in lazy chunks, so a command loads only the
// code it runs: one file read per chunk instead of hundreds of module files resolved one by one.
import { build, transform } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

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

const bundled = await build({
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
  legalComments: 'none',
  plugins: [childProcessOnUse],
  logLevel: 'warning',
  write: false,
});

/**
 * Every file of the bundle is written as CommonJS: a process whose modules are all CommonJS never
 * starts Node's ES module loader, and a CommonJS file costs less to load than an ES module.
 * esbuild splits code only into ES modules, so each file it wrote is turned into a CommonJS module
 * that requires the chunks it imported (a command's chunks are still loaded only when it runs).
 */
async function asCommonJs(file) {
  // esbuild heads each module it bundled with a `// path` line; a `//!` comment is one that the second step keeps
  const code = file.text.replace(/^\/\/ (\S+\.[cm]?[jt]sx?)$/gm, '//! $1');
  const usesOwnUrl = code.includes('import.meta.url');
  const converted = await transform(code, {
    format: 'cjs',
    platform: 'node',
    target: 'node20.19',
    // import() becomes a require() run when the import() would have run, so that no command starts Node's ES
    // module loader; except in a library that declares a `require` of its own (web-tree-sitter picks its
    // platform at run time), where a require() put in would call that one
    supported: { 'dynamic-import': /\b(?:var|let|const) require\b/.test(code) },
    define: usesOwnUrl ? { 'import.meta.url': '__nodereg_file_url' } : undefined,
    // strict, as the ES modules it was (and the source the tests run) are
    banner: usesOwnUrl
      ? "'use strict';\nconst __nodereg_file_url = require('node:url').pathToFileURL(__filename).href;"
      : "'use strict';",
    legalComments: 'inline',
    logLevel: 'warning',
  });
  return converted.code;
}
for (const file of bundled.outputFiles) {
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, file.path.endsWith('.js') ? await asCommonJs(file) : file.contents);
}
// the project's package.json makes .js files ES modules; the bundle's are CommonJS
writeFileSync(resolve(dist, 'package.json'), '{ "type": "commonjs" }\n');

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
