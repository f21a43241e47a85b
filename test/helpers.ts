// Shared by the integration and end-to-end tests: a real server on port 0 with a temp data dir,
// and the real binary spawned with a temp HOME. Nothing here talks to anything but 127.0.0.1.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRegistryServer, type RegistryServer, type RegistryServerOptions } from '../src/server/index.js';
import type { VersionPendingFields } from '../src/server/store/registry-store.js';
import { checkHints } from './cli/hint-check.js';

export const BIN = resolve(import.meta.dirname, '../bin/nodereg.js');
/** The first bytes of a 1×1 PNG: enough for the AI proxy to take an upload as an image. */
/** A version's pending fields, none given: what a store publish takes when the test needs none of them. */
export const EMPTY_PENDING_FIELDS: VersionPendingFields = {
  changelog: null,
  dependencies: null,
  supported_accelerators: null,
  supported_appui_frontend_version: null,
  supported_appui_version: null,
  supported_os: null,
  tags: null,
};

export const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

const cleanups: (() => void)[] = [];
process.on('exit', () => cleanups.forEach((cleanup) => cleanup()));

/** A fresh temporary directory, removed when the test process exits. */
export function tempDir(prefix = 'nodereg-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The binary as an installed CLI: `nodereg`, a link to bin/nodereg.js in a dir that cliEnv puts on
 * PATH (as `npm link` or a global install do), so its hints print `nodereg …`.
 */
const installedDir = tempDir('nodereg-path-');
symlinkSync(BIN, join(installedDir, 'nodereg'));
export const INSTALLED_BIN = join(installedDir, 'nodereg');

export interface TestServer {
  url: string;
  server: RegistryServer;
  dataDir: string;
  adminToken: string;
  close(): Promise<void>;
}

/** Starts a real registry on 127.0.0.1, port 0, with a temp data dir (or the one given, for restarts). */
export async function startServer(options: Partial<RegistryServerOptions> = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir('nodereg-data-');
  const adminToken = options.adminToken ?? `nrg_u_admin${randomBytes(16).toString('hex')}`;
  const server = createRegistryServer({ port: 0, host: '127.0.0.1', ...options, dataDir, adminToken });
  const url = await server.listen();
  return { url, server, dataDir, adminToken, close: () => server.close() };
}

/** A registry (as `startServer`) in which the admin has made publisher `id`, for CLI runs that publish with the admin token. */
export async function startServerWithPublisher(id: string): Promise<TestServer> {
  const server = await startServer();
  const response = await fetch(`${server.url}/publishers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, name: id }),
  });
  if (response.status !== 201) throw new Error(`publisher ${id}: ${response.status} ${await response.text()}`);
  return server;
}

/** The environment of a spawned CLI: a temp HOME and XDG dirs, NO_COLOR, CI, and nothing else of ours. */
export function cliEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: `${installedDir}:${process.env.PATH ?? ''}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    NO_COLOR: '1',
    CI: '1',
    ...extra,
  };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** stdout as bytes, for commands that write a binary result there (`--output -`). */
  stdoutBytes: Buffer;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  env?: Record<string, string | undefined>;
  input?: string;
  /** HOME for the run; a fresh temp dir by default (so no real config is read). */
  home?: string;
  timeoutMs?: number;
}

/**
 * runCli with hooks that record every file Node loads: ES modules as they load, CommonJS files as
 * the process exits. The run's result, and the files it loaded from the bundle, relative to dist/
 * (`cli/main.js`, `chunks/…`).
 */
export async function runCliRecordingLoads(
  args: string[],
  options: CliOptions = {},
): Promise<{ result: CliResult; files: string[] }> {
  const dir = tempDir('nodereg-loads-');
  const log = join(dir, 'loaded.txt');
  writeFileSync(log, '');
  writeFileSync(
    join(dir, 'loader.mjs'),
    "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) appendFileSync(process.env.LOADED_LOG, url + '\\n');\n  return next(url, context);\n}\n",
  );
  writeFileSync(
    join(dir, 'hook.mjs'),
    "import { register } from 'node:module';\nregister('./loader.mjs', import.meta.url);\n",
  );
  writeFileSync(
    join(dir, 'required.cjs'),
    "const { appendFileSync } = require('node:fs');\nconst { pathToFileURL } = require('node:url');\nprocess.on('exit', () => appendFileSync(process.env.LOADED_LOG, Object.keys(require.cache).map((file) => pathToFileURL(file).href + '\\n').join('')));\n",
  );
  const hook = pathToFileURL(join(dir, 'hook.mjs')).href;
  const result = await runCli(args, {
    ...options,
    env: { ...options.env, NODE_OPTIONS: `--import=${hook} --require=${join(dir, 'required.cjs')}`, LOADED_LOG: log },
  });
  const dist = resolve(import.meta.dirname, '../dist');
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((url) => fileURLToPath(url))
    .filter((file) => file.startsWith(`${dist}/`));
  return { result, files: [...new Set(files.map((file) => relative(dist, file)))] };
}

/**
 * Spawns `bin/nodereg.js` like a user in CI would: temp HOME and XDG dirs, NO_COLOR, CI=1, no TTY.
 * Fails when a command its hints print does not parse (test/cli/hint-check.ts).
 */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const result = await spawnCli(args, options);
  await checkHints(result.stdout, result.stderr);
  return result;
}

function spawnCli(args: string[], options: CliOptions): Promise<CliResult> {
  const env = cliEnv(options.home ?? tempDir('nodereg-home-'), { TZ: process.env.TZ ?? 'UTC' });
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [INSTALLED_BIN, ...args], {
      cwd: options.cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(chunks);
      resolvePromise({ code, signal, stdout: stdoutBytes.toString(), stdoutBytes, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
