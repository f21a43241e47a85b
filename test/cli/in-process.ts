// Runs the CLI in this process (cheaper than spawning) with captured streams and a temp HOME.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { run } from '../../src/cli/program.js';
import type { RunDeps } from '../../src/cli/context.js';
import { tempDir } from '../helpers.js';
import { checkHints } from './hint-check.js';

export interface InProcessResult {
  code: number;
  /** Always null: kept so that a result reads like runCli's (test/helpers.ts). */
  signal: null;
  stdout: string;
  /** stdout as bytes, for commands that write a binary result there (`--output -`). */
  stdoutBytes: Buffer;
  stderr: string;
}

export interface InProcessOptions extends Omit<RunDeps, 'stdout' | 'stderr' | 'stdin' | 'env'> {
  env?: Record<string, string | undefined>;
  /** Text piped on stdin (an empty pipe by default). */
  input?: string;
  home?: string;
  /** The working dir of the run (process.chdir for its length: the tests of a file run one at a time). */
  cwd?: string;
}

export async function runInProcess(argv: string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  const home = options.home ?? tempDir('nodereg-home-');
  const env: NodeJS.ProcessEnv = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    NO_COLOR: '1',
    CI: '1',
    ...options.env,
  };
  const chunks: Buffer[] = [];
  let stderr = '';
  // a real stream: `--output -` pipes a download into it
  const stdout = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  const stdin = Object.assign(Readable.from(options.input ? [options.input] : []), { isTTY: false });
  const deps: RunDeps = {
    ...options,
    env,
    stdin,
    stdout,
    stderr: { write: (chunk: string) => ((stderr += chunk), true) },
  };
  const before = process.cwd();
  if (options.cwd) process.chdir(options.cwd);
  try {
    const code = await run(argv, '0.0.0-test', deps);
    const stdoutBytes = Buffer.concat(chunks);
    const result = { code, signal: null, stdout: stdoutBytes.toString(), stdoutBytes, stderr };
    await checkHints(result.stdout, stderr);
    return result;
  } finally {
    process.chdir(before);
  }
}

/** An HTTP server on 127.0.0.1 that counts the requests it gets and answers 500 to each. */
export async function countingServer(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server: Server = createServer((_req, res) => {
    count++;
    res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal","message":"counting server"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    count: () => count,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A 127.0.0.1 port that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
