// Requires the CLI's CommonJS bundles (dist/cli/quick*.cjs) with the V8 code cache that `npm run build`
// writes beside each one (FILE.v8-cache), so that a `node show` or a `publish` neither parses and compiles
// a bundle of a few hundred KiB on every start nor compiles the functions it runs. V8 refuses a cache made
// by another V8 or with other V8 flags, and the bundle is then compiled as usual; without a cache file it
// is required.
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const { createRequire, wrap } = require('node:module');
const { dirname } = require('node:path');
const { Script } = require('node:vm');

/**
 * Set by the build's training runs (scripts/train-code-cache.js): the bundle is compiled afresh and its
 * cache written when the process exits, with every function the run compiled in it.
 */
const TRAINING = 'NODEREG_TRAIN_CODE_CACHE';
const cacheOf = (file) => `${file}.v8-cache`;

/**
 * The exports of the CommonJS file `file`, compiled with its code cache. The module goes into
 * require.cache as require() puts it there, so a second require() finds it.
 */
function requireCompiled(file) {
  if (require.cache[file]) return require.cache[file].exports;
  const training = process.env[TRAINING] === '1';
  const cached = training ? undefined : readCache(file);
  if (cached === undefined && !training) return require(file);
  const script = new Script(wrap(readFileSync(file, 'utf8')), { filename: file, cachedData: cached });
  const module = { id: file, filename: file, path: dirname(file), exports: {}, loaded: false, children: [] };
  require.cache[file] = module;
  if (training) process.once('exit', () => writeFileSync(cacheOf(file), script.createCachedData()));
  script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file));
  module.loaded = true;
  return module.exports;
}

/** The code cache of `file`; none when it cannot be read (a directory, no permission): the bundle is then required as it is. */
function readCache(file) {
  try {
    return readFileSync(cacheOf(file));
  } catch {
    return undefined;
  }
}

/** Whether V8 takes the code cache of `file` (a test asks it of the build's caches). */
function cacheAccepted(file) {
  return !new Script(wrap(readFileSync(file, 'utf8')), { filename: file, cachedData: readFileSync(cacheOf(file)) }).cachedDataRejected;
}

module.exports = { requireCompiled, cacheAccepted, TRAINING };
