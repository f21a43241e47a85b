// The CLI's entry, run by bin/nodereg.js; a bare `--version` is answered there, `node show ID` runs
// from quick-main.ts, and the `publish` lines quick-args.ts takes run from quick-publish.ts.
import { readFileSync } from 'node:fs';
import { exitAfter } from './exit.js';

const argv = process.argv.slice(2);
const version: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

const [{ run }, { invocation }] = await Promise.all([import('./program.js'), import('./invocation.js')]);
await exitAfter(run(argv, version, { invocation: invocation() }));
