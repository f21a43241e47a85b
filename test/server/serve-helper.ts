// `nodereg serve` spawned as a user runs it (the real binary, temp HOME/XDG dirs), for the end-to-end
// tests that need a running registry process: serve's own tests, and the secrets checks of its log.
// A file calls useServe() at its top level: the hook that kills its servers after each test is then the
// file's own, also when the file shares its worker process with others (where this module loads once).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterEach } from 'vitest';
import { INSTALLED_BIN, cliEnv, tempDir } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';

export interface Served {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends a signal and resolves to how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface ServeOptions {
  home?: string;
  env?: Record<string, string>;
  /** A command that runs serve, e.g. strace and its flags. */
  wrap?: string[];
}

type Serve = (args: string[], options?: ServeOptions) => Promise<Served>;

/**
 * Returns `serve`, whose processes are killed after each test of the calling file; the commands their
 * hints printed must parse (test/cli/hint-check.ts), or that test fails.
 */
export function useServe(): Serve {
  const running = new Set<ChildProcessWithoutNullStreams>();
  const served: Served[] = [];
  afterEach(async () => {
    for (const child of running) child.kill('SIGKILL');
    running.clear();
    const outputs = served.splice(0);
    for (const one of outputs) await checkHints(one.stdout(), one.stderr());
  });
  return async (args, options) => {
    const one = await serve(running, args, options);
    served.push(one);
    return one;
  };
}

/** Spawns `nodereg serve ARGS` and resolves once its first stdout line (the URL line) has arrived. */
function serve(
  running: Set<ChildProcessWithoutNullStreams>,
  args: string[],
  options: ServeOptions = {},
): Promise<Served> {
  const home = options.home ?? tempDir('nodereg-home-');
  const command = [...(options.wrap ?? []), process.execPath, INSTALLED_BIN, 'serve', ...args];
  const child = spawn(command[0], command.slice(1), { env: cliEnv(home, options.env), stdio: 'pipe' });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      const before = stdout;
      stdout += chunk;
      if (!before.includes('\n') && stdout.includes('\n')) {
        // (With --log json the line is a JSON object whose message is that line.)
        const line = stdout.startsWith('{')
          ? (JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as { message?: string }).message + '\n'
          : stdout;
        const match = /^nodereg registry listening on (http:\/\/\S+)\n/.exec(line);
        if (!match) return reject(new Error(`unexpected first stdout line: ${JSON.stringify(stdout)}`));
        resolve({
          child,
          url: match[1],
          stdout: () => stdout,
          stderr: () => stderr,
          exited,
          stop: (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    void exited.then(({ code }) => reject(new Error(`serve exited with ${code} before listening: ${stderr}`)));
  });
}
