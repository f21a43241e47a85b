#!/usr/bin/env node
// Runs the built CLI, dist/cli/main.js. A checkout that was never built says how to build it instead of a stack trace.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const main = join(__dirname, '../dist/cli/main.js');
if (existsSync(main)) {
  require(main);
} else {
  process.stderr.write(
    'error: nodereg is not built yet: dist/cli/main.js is missing\nhint: run `npm ci` in the checkout (it installs and builds), or `npm run build` after changing the code\n',
  );
  process.exitCode = 1;
}
