// Shared by the benchmarks: medians of repeated runs, ratios, and the results table.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { listeningUrl } from '../scripts/listening.js';

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Wall time of a command in ms, median of `runs` after one warm-up. */
export function timeCommand(command, args, { runs = 15, env = process.env, cwd } = {}) {
  const samples = [];
  for (let i = 0; i <= runs; i++) {
    const started = process.hrtime.bigint();
    const result = spawnSync(command, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
    if (i > 0) samples.push(elapsed);
  }
  return median(samples);
}

export const machine = () =>
  `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;

/** One row of the results table. */
export function row(name, measured, against, ratio, target, ok) {
  return {
    name,
    measured,
    against,
    ratio: ratio.toFixed(2),
    target,
    verdict: ok === undefined ? '' : ok ? 'met' : 'missed',
  };
}

export function renderTable(rows) {
  const header = '| benchmark | measured | against | ratio | target | verdict |\n|---|---|---|---|---|---|';
  const cell = (text) => String(text).replaceAll('|', '\\|'); // a pipe inside a cell would end it
  return [
    header,
    ...rows.map((r) => `| ${[r.name, r.measured, r.against, r.ratio, r.target, r.verdict].map(cell).join(' | ')} |`),
  ].join('\n');
}

/** Wall times of several commands in ms, run in turns (so a slow spell of a noisy machine hits all alike); medians. */
export function timeCommands(commands, { runs = 15, env = process.env, cwd } = {}) {
  const samples = commands.map(() => []);
  for (let i = 0; i <= runs; i++) {
    commands.forEach(([command, args], index) => {
      const started = process.hrtime.bigint();
      const result = spawnSync(command, args, { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
      const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
      if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
      if (i > 0) samples[index].push(elapsed);
    });
  }
  return samples.map(median);
}

/**
 * CPU time (user + system, in ms) of several commands, run in turns; medians. On a machine shared
 * with other work it moves far less than wall time, which waits for a core.
 */
export function cpuOfCommands(commands, { runs = 15, env = process.env, cwd } = {}) {
  const samples = commands.map(() => []);
  for (let i = 0; i <= runs; i++) {
    commands.forEach(([command, args], index) => {
      // bash's `times` reports its children's user and system time to the millisecond
      const result = spawnSync('bash', ['-c', '"$@" > /dev/null || exit 1; times', 'bench', command, ...args], {
        env,
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        encoding: 'utf8',
      });
      const match = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/m.exec(result.stdout.trim().split('\n').pop() ?? '');
      if (result.status !== 0 || !match) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
      if (i > 0)
        samples[index].push(
          (Number(match[1]) * 60 + Number(match[2]) + Number(match[3]) * 60 + Number(match[4])) * 1000,
        );
    });
  }
  return samples.map(median);
}

/** Median wall time in ms of an async function, after `warmup` untimed calls. */
export async function timeAsync(fn, { runs = 15, warmup = 2 } = {}) {
  const samples = [];
  for (let i = 0; i < warmup + runs; i++) {
    const started = process.hrtime.bigint();
    await fn();
    if (i >= warmup) samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return median(samples);
}

export const BIN = resolve(import.meta.dirname, '../bin/nodereg.js');
export const WORK = resolve(import.meta.dirname, '.work');

/** A fresh directory under bench/.work (gitignored). */
export function workDir(name) {
  const dir = join(WORK, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Env for the CLI as CI runs it: temp HOME/XDG (no profile of this machine is read), no colours. */
export function cliEnv(home, extra = {}) {
  mkdirSync(home, { recursive: true });
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    NO_COLOR: '1',
    CI: '1',
    ...extra,
  };
}

/** One of the bench's floor servers (bench/*-server.js), given `arg`, once it prints the URL it listens on. */
export async function startFloor(script, ...args) {
  const child = spawn(process.execPath, [resolve(import.meta.dirname, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await listeningUrl(child);
  return { url, pid: child.pid, stop: () => new Promise((done) => (child.on('exit', done), child.kill('SIGTERM'))) };
}

/**
 * Starts `nodereg serve` (the real binary) on 127.0.0.1 and a free port; resolves once it prints
 * its URL. `stop()` sends SIGTERM and waits for the exit.
 */
export function startServe({ dataDir, adminToken, args = [], home = join(dataDir, '..', 'home') }) {
  const env = cliEnv(home, { NODEREG_ADMIN_TOKEN: adminToken });
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--log', 'off', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((done) => child.on('exit', (code, signal) => done({ code, signal })));
  return listeningUrl(child).then(
    (url) => ({ url, pid: child.pid, child, stop: async () => (child.kill('SIGTERM'), exited) }),
    (error) => Promise.reject(new Error(`nodereg serve ${error.message}; ${stderr.trim()}`)),
  );
}

/** Peak resident set (VmHWM) of a running process in bytes, or undefined once it is gone. */
export function peakRss(pid) {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s
}

/** Mulberry32: a small deterministic PRNG in [0, 1). */
export function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const ms = (value) => `${value < 10 ? value.toFixed(1) : value.toFixed(0)} ms`;
export const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** GETs JSON over a connection of its own (no keep-alive), so no socket idle since an earlier request is reused. */
export const getJsonOnce = (url) =>
  new Promise((resolvePromise, reject) => {
    get(url, { agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => {
        try {
          resolvePromise(JSON.parse(text));
        } catch (error) {
          reject(error);
        }
      });
    }).on('error', reject);
  });

/** autocannon's connections and seconds of each measured run of the serve benches (serve.js, pg-writes.js). */
export const CONNECTIONS = 50;
export const DURATION = 10;

/**
 * One autocannon run; with `tokens`, each connection reviews as its own user and the star changes from
 * one request to the next.
 */
async function load(url, { method = 'GET', tokens, duration = DURATION, pid } = {}) {
  const cpuBefore = pid ? cpuMs(pid) : 0;
  let next = 0;
  let stars = 0;
  const result = await autocannon({
    url,
    method,
    connections: CONNECTIONS,
    duration,
    // each connection reviews as its own user; the star changes from one request to the next
    setupClient: tokens
      ? (client) => client.setHeaders({ authorization: `Bearer ${tokens[next++ % tokens.length]}` })
      : undefined,
    requests: tokens
      ? [
          {
            setupRequest: (request) => ({
              ...request,
              path: request.path.replace(/star=\d/, `star=${(stars++ % 5) + 1}`),
            }),
          },
        ]
      : undefined,
  });
  if (result.errors || result.non2xx || result.timeouts)
    throw new Error(`${method} ${url}: ${result.errors} errors, ${result.non2xx} non-2xx, ${result.timeouts} timeouts`);
  const cpuPerRequest = pid ? ((cpuMs(pid) - cpuBefore) * 1000) / result.requests.total : undefined;
  return { rps: result.requests.average, p99: result.latency.p99, cpu: cpuPerRequest };
}

/** A 2-second warm-up run, then the measured one: requests/s, p99 and the server's CPU µs per request (with `pid`). */
export async function measure(url, options) {
  await load(url, { ...options, duration: 2 });
  return load(url, options);
}

/** How many turns measureInTurns takes through its targets. */
export const TURNS = 5;

/**
 * Each target (`[url, options]` as measure takes them; an undefined one is left out) warmed up for 2 s,
 * then loaded TURNS times in turn with the others, DURATION / TURNS s each: what a shared machine does
 * meanwhile falls on all of them alike. Gives each its medians: requests/s, p99, CPU µs per request.
 */
export async function measureInTurns(targets) {
  const entries = Object.entries(targets).filter(([, target]) => target !== undefined);
  for (const [, [url, options]] of entries) await load(url, { ...options, duration: 2 });
  const runs = new Map(entries.map(([name]) => [name, []]));
  for (let turn = 0; turn < TURNS; turn++)
    for (const [name, [url, options]] of entries)
      runs.get(name).push(await load(url, { ...options, duration: DURATION / TURNS }));
  const medianOf = (list, field) => (list[0][field] === undefined ? undefined : median(list.map((run) => run[field])));
  return Object.fromEntries(
    [...runs].map(([name, list]) => [
      name,
      { rps: medianOf(list, 'rps'), p99: medianOf(list, 'p99'), cpu: medianOf(list, 'cpu') },
    ]),
  );
}
