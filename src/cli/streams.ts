// Where a run writes: the streams given to `run`, else the process's.

export interface Stream {
  write(chunk: string): boolean;
  isTTY?: boolean;
}

/** A run's stdout and stderr. */
export interface Streams {
  readonly stdout: Stream;
  readonly stderr: Stream;
}

/**
 * The one choice of a run's streams: those given, else process.stdout and process.stderr, each read
 * only when used. Node makes a process stream on first use (cli/exit.ts), and `--version` makes no stderr.
 */
export function chooseStreams(given: { stdout?: Stream; stderr?: Stream }): Streams {
  return {
    get stdout() {
      return given.stdout ?? process.stdout;
    },
    get stderr() {
      return given.stderr ?? process.stderr;
    },
  };
}
