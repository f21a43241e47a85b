// Requires the CLI's CommonJS bundles (dist/cli/quick*.cjs) with the V8 code cache that `npm run build`
// writes beside each one (FILE.v8-cache), so that a `node show` or a `publish` does not parse and compile
// a bundle of a few hundred KiB on every start (~3-5 ms here). V8 refuses a cache made by another V8 or
// with other V8 flags, and the bundle is then compiled as usual; without a cache file it is required.
'use strict';
const { existsSync, readFileSync, writeFileSync } = require('node:fs');
const { createRequire, wrap } = require('node:module');
const { dirname } = require('node:path');
const { Script } = require('node:vm');

const cacheOf = (file) => `${file}.v8-cache`;

/**
 * The exports of the CommonJS file `file`, compiled with its code cache. With `writeCache` (the build),
 * it writes that cache after the file's top level ran, so that the functions it ran are in it too.
 * The module goes into require.cache as require() puts it there, so a second require() finds it.
 */
function requireCompiled(file, { writeCache = false } = {}) {
  if (require.cache[file]) return require.cache[file].exports;
  const cached = existsSync(cacheOf(file)) ? readFileSync(cacheOf(file)) : undefined;
  if (cached === undefined && !writeCache) return require(file);
  const script = new Script(wrap(readFileSync(file, 'utf8')), { filename: file, cachedData: cached });
  const module = { id: file, filename: file, path: dirname(file), exports: {}, loaded: false, children: [] };
  require.cache[file] = module;
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  module.loaded = true;
  if (writeCache) writeFileSync(cacheOf(file), script.createCachedData());
  return module.exports;
}

/** Whether V8 takes the code cache of `file` (a test asks it of the build's caches). */
function cacheAccepted(file) {
  return !new Script(wrap(readFileSync(file, 'utf8')), { filename: file, cachedData: readFileSync(cacheOf(file)) }).cachedDataRejected;
}

module.exports = { requireCompiled, cacheAccepted };
