// How the CLI ends (main.ts): the only module that exits.
import { exitCodeForSignal } from './exit-codes.js';

/**
 * Resolves once everything written to `stream` so far has left the process. A pipe takes 64 KiB at
 * a time and Node queues the rest, so exiting straight after a large write would cut the output.
 * A reader that went away (EPIPE) has nothing left to wait for.
 */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((resolve) => stream.write('', () => resolve()));
}

/** A reader that stops early (`nodereg openapi | head`) is not an error of ours. */
function ignoreClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
}

/** Exits with `code` once stdout and stderr are flushed, rather than wait for the event loop: keep-alive sockets or timers a command left must not hold it. */
async function exitWhenFlushed(code: number): Promise<never> {
  process.exitCode = code;
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

/**
 * Ends the process at once for a signal a task caught (project.ts withCleanup, once its files are
 * gone), with the code a step that handles the signal itself ends with: 130 or 143.
 */
export function exitForSignal(signal: NodeJS.Signals): never {
  process.exit(exitCodeForSignal(signal));
}

/** An entry's end: output to a reader that went away is dropped, and the process exits with the command's code once flushed. */
export function exitAfter(running: Promise<number>): Promise<never> {
  ignoreClosedPipes();
  return running.then(exitWhenFlushed);
}
