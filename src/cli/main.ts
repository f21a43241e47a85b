// The CLI's entry, run by bin/nodereg.js: the only module that starts a command and ends the process.
import { readFileSync } from 'node:fs';
import { exitAfter } from './exit.js';
import { invocation } from './invocation.js';
import { run } from './program.js';

const version: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
void exitAfter(() => run(process.argv.slice(2), version, { invocation: invocation() }));
