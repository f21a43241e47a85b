// The CLI's entry, run by bin/nodereg.js; a bare `--version` is answered there, and the command lines
// quick-args.ts takes run from quick-main.ts.
import { readFileSync } from 'node:fs';
import { exitWhenFlushed, ignoreClosedPipes } from './exit.js';

const argv = process.argv.slice(2);
const version: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

ignoreClosedPipes();
const [{ run }, { invocation }] = await Promise.all([import('./program.js'), import('./invocation.js')]);
await exitWhenFlushed(await run(argv, version, { invocation: invocation() }));
