#!/usr/bin/env node
// Runs the built CLI. CommonJS (bin/package.json), so that `--version` is answered before Node sets up
// its ES module loader (~3 ms) and without process.stdout (~2 ms), and so that `node show ID` and a plain
// `publish` run from CommonJS bundles of their own (src/cli/quick-main.ts, src/cli/quick-publish.ts);
// everything else imports the ES module bundle. Those two are compiled with their V8 code cache (bin/compiled.js).
// A checkout that was never built says how to build it instead of a stack trace.
'use strict';
const { existsSync, readFileSync, writeSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const argv = process.argv.slice(2);
const main = join(__dirname, '../dist/cli/main.js');
const version = () => JSON.parse(readFileSync(join(__dirname, '../package.json'), 'utf8')).version;
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  try {
    writeSync(1, `${version()}\n`);
  } catch (error) {
    if (error.code !== 'EPIPE') throw error; // a reader that went away is not an error of ours
  }
} else if (existsSync(main)) {
  const quick = require('../dist/cli/quick-args.cjs').quickCommand(argv)?.kind;
  const bundle = (name) => require('./compiled.js').requireCompiled(join(__dirname, '../dist/cli', name));
  if (quick === 'node-show') bundle('quick.cjs').runQuick(argv, version());
  else if (quick === 'publish') bundle('quick-publish.cjs').runQuickPublish(argv, version());
  else import(pathToFileURL(main).href);
} else {
  process.stderr.write('error: nodereg is not built yet: dist/cli/main.js is missing\nhint: run `npm ci` in the checkout (it installs and builds), or `npm run build` after changing the code\n');
  process.exitCode = 1;
}
