// The CLI's entry, run by bin/nodereg.js; a bare `--version` is answered there, and `node show ID`
// runs from quick-main.ts. The `publish` lines quick-args.ts takes run from quick-publish.ts.
import { readFileSync } from 'node:fs';
import { exitWhenFlushed, ignoreClosedPipes } from './exit.js';
import { quickCommand } from './quick-args.js';

const argv = process.argv.slice(2);
const version: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

ignoreClosedPipes();
const entry = quickCommand(argv)?.kind === 'publish' ? import('./quick-publish.js') : import('./program.js');
const [{ run }, { invocation }] = await Promise.all([entry, import('./invocation.js')]);
await exitWhenFlushed(await run(argv, version, { invocation: invocation() }));
