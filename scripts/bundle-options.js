// How nodereg's code is bundled: the options `npm run build` (scripts/bundle.js) gives Rolldown, also used by
// the startup benchmark's floors (bench/startup-floors.js), so that a floor is built exactly as the CLI is.

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

/** Rolldown's input options, but for `cwd` and `input`. */
export const inputOptions = {
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
};

/**
 * Rolldown's output options, but for `dir`. Every file of the bundle is CommonJS: a process whose modules
 * are all CommonJS never starts Node's ES module loader, and a CommonJS file costs less to load than an ES
 * module. A chunk's dynamic import() is a require() run when the import() would have run; import.meta.url
 * is the file's own URL. Rolldown keeps in an entry's chunk the modules it loads statically, and each file
 * strict, as the ES modules it was made from.
 */
export const outputOptions = {
  format: 'cjs',
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
  strict: true,
  // import() of a library or a builtin is a require() too (Rolldown renames a library's own `require`)
  dynamicImportInCjs: false,
  comments: { legal: false },
};

/** The package.json beside a bundle: the project's makes .js files ES modules; the bundle's are CommonJS. */
export const bundlePackageJson = '{ "type": "commonjs" }\n';
