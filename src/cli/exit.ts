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
function ignoreClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

/**
 * process.stdout and process.stderr, each as it is first used: Node makes them then, and making one
 * for a pipe loads the net module, which a run that never writes to it should not pay for
 * (`--version` never writes to stderr). Each is guarded against a closed pipe when it is made, and
 * only those made are flushed at the end.
 */
function standardStreamsOnUse(): NodeJS.WriteStream[] {
  const made: NodeJS.WriteStream[] = [];
  for (const name of ['stdout', 'stderr'] as const) {
    const own = Object.getOwnPropertyDescriptor(process, name);
    const make = own?.get;
    if (!own?.configurable || !make) {
      ignoreClosedPipe(process[name]);
      made.push(process[name]);
      continue;
    }
    let stream: NodeJS.WriteStream | undefined;
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: own.enumerable,
      get() {
        if (!stream) {
          stream = make.call(process) as NodeJS.WriteStream;
          ignoreClosedPipe(stream);
          made.push(stream);
        }
        return stream;
      },
    });
  }
  return made;
}

/** Exits with `code` once the streams written to are flushed, rather than wait for the event loop: keep-alive sockets or timers a command left must not hold it. */
async function exitWhenFlushed(code: number, streams: NodeJS.WriteStream[]): Promise<never> {
  process.exitCode = code;
  await Promise.all(streams.map(flushed));
  process.exit(code);
}

/**
 * Ends the process at once for a signal a task caught (project.ts withCleanup, once its files are
 * gone), with the code a step that handles the signal itself ends with: 130 or 143.
 */
export function exitForSignal(signal: NodeJS.Signals): never {
  process.exit(exitCodeForSignal(signal));
}

/** An entry's end: runs `command`; output to a reader that went away is dropped, and the process exits with the command's code once flushed. */
export function exitAfter(command: () => Promise<number>): Promise<never> {
  const streams = standardStreamsOnUse();
  return command().then((code) => exitWhenFlushed(code, streams));
}
