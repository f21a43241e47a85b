// A registry in its own process (test/server/child-server.js, the built server of dist/), for what an in-process server cannot
// show: a crash (kill -9) and a restart on the same data dir, the server's own memory, and whether it
// is still alive after hostile input.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import yazl from 'yazl';
import type { RegistryServerOptions } from '../../src/server/index.js';

const SCRIPT = resolve(import.meta.dirname, './child-server.js');
const ROOT = resolve(import.meta.dirname, '../..');
const BUILT = resolve(ROOT, 'dist/server/index.js');

export interface ChildServer {
  url: string;
  adminToken: string;
  dataDir: string;
  process: ChildProcess;
  /** Everything the server wrote on stderr so far. */
  stderr(): string;
  /** Resolves when the process has exited, with its code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  /** kill -9, then waits for the exit. */
  kill(): Promise<void>;
  /** A graceful close (in-flight requests finish, the database closes). */
  close(): Promise<void>;
  /**
   * RSS now, the process's lifetime peak, and the peak since the last call; `held`: V8's heap and the
   * Buffers' memory after a collection, what a leak grows (RSS also keeps what malloc has not returned).
   */
  memory(): Promise<{ rss: number; maxRss: number; peak: number; held: number }>;
  /** The bytes the server's uploads hold of their memory budget. */
  uploadMemory(): Promise<number>;
  /** Arms a SIGKILL at one step of the next upload (see child-server.js). */
  crashAt(point: 'archive-stored' | 'archive-recorded'): Promise<void>;
}

export interface ChildOptions {
  adminToken?: string;
  /** Server options; `log: true` puts the access log on stderr (see `stderr()`). */
  options?: Omit<Partial<RegistryServerOptions>, 'log'> & { log?: boolean };
  /** The process's limit of open files (`ulimit -n`), when not the inherited one. */
  fdLimit?: number;
}

export async function startChild(
  dataDir: string,
  { adminToken, options, fdLimit }: ChildOptions = {},
): Promise<ChildServer> {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run \`npm run build\` first (npm test does)`);
  const token = adminToken ?? `nrg_u_admin${randomBytes(16).toString('hex')}`;
  const args = ['--expose-gc', SCRIPT, dataDir, token, JSON.stringify(options ?? {})];
  // The shell sets the limit and becomes node (exec): the pid stays the server's.
  const [command, argv] =
    fdLimit === undefined
      ? [process.execPath, args]
      : ['/bin/sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...args]];
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], cwd: ROOT });
  // Never outlive the test process, whatever happens to the test.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  let running = true;
  void exited.then(() => {
    running = false;
    process.off('exit', reap);
  });
  const url = await new Promise<string>((done, fail) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) done(out.trim());
    });
    void exited.then(({ code, signal }) =>
      fail(new Error(`the server exited with ${code ?? signal} before listening: ${stderr}`)),
    );
  });
  return {
    url,
    adminToken: token,
    dataDir,
    process: child,
    stderr: () => stderr,
    exited,
    alive: () => running,
    async kill() {
      if (running) child.kill('SIGKILL');
      await exited;
    },
    async close() {
      if (running && child.connected) child.send('close');
      await exited;
    },
    memory: () =>
      new Promise((done) => {
        child.once('message', (message) =>
          done(message as { rss: number; maxRss: number; peak: number; held: number }),
        );
        child.send('memory');
      }),
    uploadMemory: () =>
      new Promise((done) => {
        child.once('message', (message) => done((message as { held: number }).held));
        child.send('upload-memory');
      }),
    crashAt: (point) =>
      new Promise((done) => {
        child.once('message', () => done());
        child.send({ crashAt: point });
      }),
  };
}

/** A zip of these files, stored without compression (quick to build, even for megabytes of random bytes). */
export function storedZip(files: Record<string, string | Buffer>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) {
    zip.addBuffer(Buffer.from(content), name, { mtime: new Date(2020, 0, 1), compress: false });
  }
  zip.end();
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => done(Buffer.concat(chunks)));
    zip.outputStream.on('error', fail);
  });
}
