#!/usr/bin/env node
// Runs the built CLI; a checkout that was never built says how to build it instead of a stack trace.
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(main)) {
  await import(main.href);
} else {
  process.stderr.write('error: nodereg is not built yet: dist/cli/main.js is missing\nhint: run `npm ci` in the checkout (it installs and builds), or `npm run build` after changing the code\n');
  process.exitCode = 1;
}
