// Serve: requests/s and p99 of `GET /nodes/{id}` and `POST /nodes/{id}/reviews?star=N` with 50
// concurrent connections (autocannon), against (a) `nodereg serve` in a child process, (b) a bare
// node:http server answering the same JSON from memory (the floor) and (c) Verdaccio 6.8 serving a
// package's metadata (the peer; installed on demand under bench/.work, never a project dependency).
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import {
  CONNECTIONS,
  DURATION,
  measureInTurns,
  median,
  ms,
  row,
  startFloor,
  startServe,
  TURNS,
  workDir,
  WORK,
} from './lib.js';
import { seedStore } from './seed-store.js';

const USERS = CONNECTIONS; // one reviewer per connection, so every review is written (replaced) by its own user
const VERDACCIO = '6.8.0'; // the last release that runs on Node 20

/** A TCP port free on loopback at the moment (Verdaccio takes its port from its command line). */
const freePort = () =>
  new Promise((resolvePort) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolvePort(port));
    });
  });

/** Verdaccio under bench/.work/verdaccio, installed with npm the first time; throws when it cannot be. */
function installVerdaccio() {
  const dir = join(WORK, 'verdaccio');
  const bin = join(dir, 'node_modules/verdaccio/bin/verdaccio');
  const installed = join(dir, 'node_modules/verdaccio/package.json');
  if (existsSync(installed) && JSON.parse(readFileSync(installed, 'utf8')).version === VERDACCIO) return bin;
  mkdirSync(dir, { recursive: true });
  // verdaccio-audit asks for node-fetch by its `cjs` dist-tag (the 2.x line), which not every registry
  // mirror carries: name that line directly.
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ private: true, overrides: { 'node-fetch': '^2.7.0' } })}\n`,
  );
  process.stderr.write(`bench: installing verdaccio@${VERDACCIO} into ${dir}…\n`);
  const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `verdaccio@${VERDACCIO}`], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (npm.status !== 0 || !existsSync(bin))
    throw new Error(
      `npm install verdaccio@${VERDACCIO} failed: ${(npm.stderr || npm.error?.message || '').trim().split('\n').slice(-3).join(' ')}`,
    );
  return bin;
}

/** Verdaccio with no uplinks (it never leaves 127.0.0.1), its web UI off, logging only fatal errors, one package in storage. */
async function startVerdaccio(bin) {
  const dir = workDir('verdaccio-run');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const packument = {
    name: 'bench-pkg',
    description: 'A package to serve the metadata of',
    'dist-tags': { latest: '1.0.0' },
    versions: {
      '1.0.0': {
        name: 'bench-pkg',
        version: '1.0.0',
        description: 'A package to serve the metadata of',
        main: 'index.js',
        license: 'MIT',
        dependencies: { semver: '^7.0.0' },
        dist: {
          tarball: `${url}/bench-pkg/-/bench-pkg-1.0.0.tgz`,
          shasum: '0'.repeat(40),
          integrity: `sha512-${Buffer.alloc(64).toString('base64')}`,
        },
      },
    },
    time: {
      created: '2024-01-01T00:00:00.000Z',
      modified: '2024-01-01T00:00:00.000Z',
      '1.0.0': '2024-01-01T00:00:00.000Z',
    },
    _uplinks: {},
    _distfiles: {},
    _attachments: {},
    _rev: '1-0000000000000000',
  };
  mkdirSync(join(dir, 'storage/bench-pkg'), { recursive: true });
  writeFileSync(join(dir, 'storage/bench-pkg/package.json'), JSON.stringify(packument));
  writeFileSync(
    join(dir, 'config.yaml'),
    [
      `storage: ${join(dir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(dir, 'htpasswd')}`,
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'web:',
      '  enable: false',
      'log: { type: stdout, format: pretty, level: fatal }',
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [bin, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((done) => child.on('exit', done));
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${url}/bench-pkg`).catch(() => undefined);
    if (response?.ok && (await response.json()).name === 'bench-pkg') break;
    if (attempt > 300 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`verdaccio did not serve the package: ${stderr.trim().slice(-300)}`);
    }
    await new Promise((wait) => setTimeout(wait, 100));
  }
  return { url: `${url}/bench-pkg`, pid: child.pid, stop: () => (child.kill('SIGTERM'), exited) };
}

/** Median ms of `fn` run one after the other, after a warm-up. */
async function sequential(fn, runs = 50) {
  for (let i = 0; i < 5; i++) await fn();
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

/** Publishes a node with a 1 MB archive (stored: random bytes) and times install + download of it. */
async function installAndDownload(url, adminToken, dir) {
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
  const post = async (path, body) => {
    const response = await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) });
    if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  await post('/publishers', { id: 'bench-dl', name: 'Bench downloads' });
  const published = await post('/publishers/bench-dl/nodes/one-mb/versions', {
    node: { id: 'one-mb' },
    node_version: { version: '1.0.0' },
  });
  writeFileSync(join(dir, 'weights.bin'), randomBytes(1024 * 1024));
  const zipFile = join(dir, 'one-mb.zip');
  const zipped = spawnSync('zip', ['-q0', zipFile, 'weights.bin'], { cwd: dir });
  if (zipped.status !== 0) throw new Error(`zip failed: ${zipped.stderr}`);
  const zip = readFileSync(zipFile);
  const sha256 = createHash('sha256').update(zip).digest('hex');
  const put = await fetch(published.signedUrl, {
    method: 'PUT',
    headers: { 'content-type': 'application/zip', 'x-content-sha256': sha256 },
    body: zip,
  });
  if (put.status !== 200) throw new Error(`upload: ${put.status} ${await put.text()}`);
  const time = await sequential(async () => {
    const version = await (await fetch(`${url}/nodes/one-mb/install`)).json();
    const archive = await (await fetch(version.downloadUrl)).arrayBuffer();
    if (archive.byteLength < 1024 * 1024) throw new Error(`download: ${archive.byteLength} bytes`);
  });
  return { ms: time, zipFile };
}

/** A token for each reviewer, made by the admin. */
async function reviewerTokens(url, adminToken) {
  const tokens = [];
  for (let i = 0; i < USERS; i++) {
    const response = await fetch(`${url}/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `reviewer ${i}` }),
    });
    if (response.status !== 201) throw new Error(`POST /users: ${response.status} ${await response.text()}`);
    tokens.push((await response.json()).token);
  }
  return tokens;
}

export default async function serve() {
  const dir = workDir('serve');
  const dataDir = join(dir, 'data');
  await seedStore(dataDir, 1);
  const adminToken = `nrg_u_${randomBytes(16).toString('hex')}`;
  const notes = [
    `serve: autocannon with ${CONNECTIONS} connections in the benchmark process, on the same machine as the servers it loads (they share its cores); each server warmed up for 2 s, then all loaded in ${TURNS} turns of ${DURATION / TURNS} s each, one after the other; medians of the turns`,
  ];
  const rows = [];

  const ours = await startServe({ dataDir, adminToken });
  const servers = [ours];
  let measured, install;
  try {
    const { nodes } = await (await fetch(`${ours.url}/nodes?limit=1`)).json();
    const nodeUrl = `${ours.url}/nodes/${nodes[0].id}`;
    const tokens = await reviewerTokens(ours.url, adminToken);
    install = await installAndDownload(ours.url, adminToken, dir);
    const jsonFile = join(dir, 'node.json');
    writeFileSync(jsonFile, await (await fetch(nodeUrl)).text());
    const floorServer = await startFloor('floor-server.js', jsonFile);
    servers.push(floorServer);
    const honoDir = join(dir, 'hono-reviews');
    mkdirSync(honoDir, { recursive: true });
    const honoServer = await startFloor('hono-floor-server.js', jsonFile, '--reviews', honoDir);
    servers.push(honoServer);
    let verdaccio;
    try {
      verdaccio = await startVerdaccio(installVerdaccio());
      servers.push(verdaccio);
    } catch (error) {
      notes.push(`serve: Verdaccio ${VERDACCIO} not measured (${error.message})`);
    }
    const posted = (server, extra) => ({ method: 'POST', pid: server.pid, ...extra });
    measured = await measureInTurns({
      get: [nodeUrl, { pid: ours.pid }],
      floorGet: [`${floorServer.url}/nodes/x`, { pid: floorServer.pid }],
      hono: [`${honoServer.url}/nodes/x`, { pid: honoServer.pid }],
      peer: verdaccio && [verdaccio.url, { pid: verdaccio.pid }],
      review: [`${nodeUrl}/reviews?star=1`, posted(ours, { tokens })],
      floorPost: [`${floorServer.url}/nodes/x/reviews?star=1`, posted(floorServer)],
      honoReview: [
        `${honoServer.url}/nodes/x/reviews?star=1`,
        posted(honoServer, { tokens: tokens.map((_, i) => `token-${i}`) }),
      ],
    });
    const after = await (await fetch(nodeUrl)).json();
    notes.push(
      `serve: reviews spread over ${USERS} users (one per connection), each replacing its own review; the node's rating afterwards: ${after.rating.toFixed(2)}`,
    );
  } finally {
    for (const server of servers.reverse()) await server.stop();
  }
  const { get, floorGet, hono, peer, review, floorPost, honoReview } = measured;

  const archiveFloor = await startFloor('floor-server.js', install.zipFile);
  let bareDownload;
  try {
    bareDownload = await sequential(async () => (await fetch(archiveFloor.url)).arrayBuffer());
  } finally {
    await archiveFloor.stop();
  }
  rows.push(
    row(
      'serve: `GET /nodes/{id}/install` + archive download, 1 MB node',
      ms(install.ms),
      `bare node:http, the same bytes: ${ms(bareDownload)}`,
      install.ms / bareDownload,
      '(reference: one after the other)',
    ),
  );

  const rate = (r) => `${Math.round(r.rps).toLocaleString('en')}/s, p99 ${ms(r.p99)}`;
  const floorRate = `bare node:http, same JSON: ${rate(floorGet)}`;
  rows.push(
    row(
      'serve: `GET /nodes/{id}`',
      rate(get),
      floorRate,
      get.rps / floorGet.rps,
      '≥ 0.5× the floor',
      get.rps / floorGet.rps >= 0.5,
    ),
  );
  rows.push(
    row(
      'reference: bare Hono (@hono/node-server), same JSON',
      rate(hono),
      floorRate,
      hono.rps / floorGet.rps,
      '(what the framework alone reaches)',
    ),
  );
  if (peer)
    rows.push(
      row(
        'serve: `GET /nodes/{id}` vs Verdaccio',
        rate(get),
        `Verdaccio ${VERDACCIO} package metadata: ${rate(peer)}`,
        get.rps / peer.rps,
        '≥ 10× Verdaccio',
        get.rps / peer.rps >= 10,
      ),
    );
  else
    rows.push({
      name: 'serve: `GET /nodes/{id}` vs Verdaccio',
      measured: rate(get),
      against: `Verdaccio ${VERDACCIO}: not measured`,
      ratio: '—',
      target: '≥ 10× Verdaccio',
      verdict: 'not measured',
    });
  const postFloorRate = `bare node:http, same JSON: ${rate(floorPost)}`;
  rows.push(
    row(
      'serve: `POST /nodes/{id}/reviews?star=N`',
      rate(review),
      postFloorRate,
      review.rps / floorPost.rps,
      '≥ 10,000/s, p99 < 20 ms',
      review.rps >= 10_000 && review.p99 < 20,
    ),
  );
  rows.push(
    row(
      'reference: bare Hono, reviews written to SQLite a turn at a time',
      rate(honoReview),
      postFloorRate,
      honoReview.rps / floorPost.rps,
      '(the least a review can do on the framework)',
    ),
  );
  const cpu = (r) => (r?.cpu === undefined ? 'not measured' : `${r.cpu.toFixed(0)} µs`);
  rows.push(
    row(
      'serve: server CPU per `GET /nodes/{id}`',
      cpu(get),
      `bare Hono: ${cpu(hono)} · bare node:http: ${cpu(floorGet)}`,
      get.cpu / hono.cpu,
      "(toward the framework's)",
    ),
  );
  rows.push(
    row(
      'serve: server CPU per review',
      cpu(review),
      `bare Hono writing to SQLite: ${cpu(honoReview)} · bare node:http: ${cpu(floorPost)}`,
      review.cpu / honoReview.cpu,
      '(toward the framework with its write)',
    ),
  );
  notes.push(
    `serve: server CPU time per request (user + system, from /proc/PID/stat; steadier than requests/s on a shared machine): GET ours ${cpu(get)}, bare Hono ${cpu(hono)}, bare node:http ${cpu(floorGet)}, Verdaccio ${cpu(peer)}; reviews ours ${cpu(review)}, bare Hono writing to SQLite ${cpu(honoReview)}, bare node:http ${cpu(floorPost)}`,
  );
  return { rows, notes };
}
