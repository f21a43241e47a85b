// The only module that exits. A bare `--version` is answered by bin/nodereg.js before this loads.
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const version: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/**
 * Resolves once everything written to `stream` so far has left the process. A pipe takes 64 KiB at
 * a time and Node queues the rest, so exiting straight after a large write would cut the output.
 * A reader that went away (EPIPE) has nothing left to wait for.
 */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve) => stream.write('', () => resolve()));
}

// A reader that stops early (`nodereg openapi | head`) is not an error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

const [{ run }, { invocation }] = await Promise.all([import('./program.js'), import('./invocation.js')]);
const code = await run(argv, version, { invocation: invocation() });
process.exitCode = code;
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
// Exit rather than wait for the event loop: keep-alive sockets or timers a command left must not hold it.
process.exit(code);
