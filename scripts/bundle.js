// `npm run build`: bundles the CLI with Rolldown into dist/ (tsc only type-checks). Code splitting keeps
// each command, the server, the packer and the prompts in lazy chunks, so a command loads only the
// code it runs: one file read per chunk instead of hundreds of module files resolved one by one.
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { rolldown } from 'rolldown';

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
  resolveId(source, importer) {
    if (source === 'node:child_process' && importer && /[\\/]node_modules[\\/]commander[\\/]/.test(importer))
      return '\0child-process-on-use';
  },
  load(id) {
    if (id === '\0child-process-on-use')
      return "module.exports = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });";
  },
};
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
  // the AI proxy's body worker, started by path (src/server/proxy/bodies.ts finds it at
  // dist/server/proxy/body-worker.js)
  'server/proxy/body-worker',
];

const bundle = await rolldown({
  cwd: root,
  input: Object.fromEntries(entries.map((entry) => [entry, `src/${entry}.ts`])),
  platform: 'node',
  // the source imports its TypeScript modules by their .js names, as Node resolves the built files
  resolve: { extensionAlias: { '.js': ['.ts', '.js'] } },
  // A native addon loads files next to its own package: it stays in node_modules (only `serve` needs it).
  external: ['better-sqlite3'],
  plugins: [childProcessOnUse],
  // web-tree-sitter runs code it builds at run time with eval, by design
  onLog(level, log, handler) {
    if (log.code !== 'EVAL') handler(level, log);
  },
});
/**
 * Every file of the bundle is CommonJS: a process whose modules are all CommonJS never starts Node's ES module
 * loader, and a CommonJS file costs less to load than an ES module. A chunk's dynamic import() is a require() run
 * when the import() would have run; import.meta.url is the file's own URL. Rolldown keeps in an entry's chunk the
 * modules it loads statically, and each file strict, as the ES modules it was made from.
 */
await bundle.write({
  dir: dist,
  format: 'cjs',
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
  strict: true,
  // import() of a library or a builtin is a require() too (Rolldown renames a library's own `require`)
  dynamicImportInCjs: false,
  comments: { legal: false },
});
await bundle.close();
// the project's package.json makes .js files ES modules; the bundle's are CommonJS
writeFileSync(resolve(dist, 'package.json'), '{ "type": "commonjs" }\n');

// The scanner's version and its WebAssembly files, named by src/scan/version.ts, bundled alone to run here.
const versionModule = await rolldown({
  cwd: root,
  input: 'src/scan/version.ts',
  platform: 'node',
  resolve: { extensionAlias: { '.js': ['.ts', '.js'] } },
});
const [{ code }] = (await versionModule.generate({ format: 'esm' })).output;
await versionModule.close();
const { scannerVersion, RUNTIME, GRAMMARS, VERSION_FILE } = await import(
  `data:text/javascript;base64,${Buffer.from(code).toString('base64')}`
);
// the scan cache's key (src/scan/cache.ts reads it): a hash of the scanner's sources, not of the whole bundle
writeFileSync(resolve(dist, VERSION_FILE), `${scannerVersion(root)}\n`);
// beside the bundle (src/scan/scanner.ts looks in dist/wasm first), so that publish and scan run from a packed
// tarball with Node alone (the README's CI recipe)
mkdirSync(resolve(dist, 'wasm'));
for (const file of [RUNTIME, ...Object.values(GRAMMARS)]) {
  copyFileSync(require.resolve(file), resolve(dist, 'wasm', file.split('/').pop()));
}
