// The registry scans every uploaded archive in a worker thread (DESIGN.md §10): a high finding makes
// the version Flagged with a one-line reason; the findings go to the node's publisher members and
// admins only; an admin lifts the flag; `--scan warn` keeps findings without flagging, `off` scans
// nothing; and /healthz keeps answering while a large archive is scanned (how fast: figures that
// `npm run bench latency` holds to their targets).
import { rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCAN_MAX_FINDINGS_PER_RULE } from '../../src/shared/scan.js';
import { SCAN_QUEUE_RETRY_AFTER_S } from '../../src/shared/tuning.js';
import { MemoryBudget, validateZip } from '../../src/server/archives/validate-zip.js';
import { scanArchive } from '../../src/scan/run.js';
import { ScanWorker } from '../../src/scan/threads.js';
import { createUploadScanner } from '../../src/server/scan-upload.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { figureLoad, latency } from '../figures.js';
import { startChild } from '../server/child.js';
import {
  client,
  createPublisher,
  createUser,
  healthzWhile,
  makeZip,
  publish,
  uploadTo,
  type TestUser,
} from '../server/fixtures.js';

const RISKY = {
  '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n# subprocess.run("pip install x") is only a comment\n',
  'nodes/run.py':
    'import subprocess, sys\n\ndef setup():\n    subprocess.check_call([sys.executable, "-m", "pip", "install", "numpy"])\n\nsys.path.append("vendor")\n',
};

async function publishArchive(
  server: TestServer,
  owner: TestUser,
  nodeId: string,
  version: string,
  files: Record<string, string>,
) {
  const published = await publish(server, owner.token, 'acme', nodeId, version);
  expect(published.status, published.text).toBe(201);
  const uploaded = await uploadTo(published.body.signedUrl, await makeZip(files));
  expect(uploaded.status, uploaded.text).toBe(200);
  return uploaded.body;
}

describe('--scan flag (the default)', () => {
  let server: TestServer;
  let owner: TestUser;
  let stranger: TestUser;
  beforeAll(async () => {
    // 20 uploads of one publisher at once: more than the default cap of uploads in progress (upload-flood.test.ts)
    server = await startServer({ uploads: { perPublisher: 100 } });
    owner = await createUser(server);
    stranger = await createUser(server);
    await createPublisher(server, owner, 'acme');
  });
  afterAll(() => server.close());

  it('a version with a high finding is Flagged with the reason; the publisher sees the findings, a stranger does not; an admin lifts the flag', async () => {
    const api = client(server);
    const uploaded = await publishArchive(server, owner, 'risky', '1.0.0', RISKY);
    expect(uploaded).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: runtime-install at nodes/run.py:4',
    });
    expect(uploaded.findings.map((f: { rule: string; line: number }) => `${f.rule}:${f.line}`)).toEqual([
      'runtime-install:4',
      'environment-manipulation:6',
    ]);

    const asOwner = await api.get('/nodes/risky/versions/1.0.0', { token: owner.token });
    expect(asOwner.body.findings[0]).toEqual({
      rule: 'runtime-install',
      severity: 'high',
      file: 'nodes/run.py',
      line: 4,
      column: 5,
      message: expect.stringContaining('pip install'),
      hint: expect.any(String),
      fingerprint: expect.any(String),
    });
    const listed = await api.get('/nodes/risky/versions?include_status_reason=true', { token: owner.token });
    expect(listed.body[0].findings).toHaveLength(2);
    expect((await api.get('/nodes/risky/versions', { token: owner.token })).body[0].findings).toBeUndefined();
    expect((await api.get('/nodes/risky/versions/1.0.0', { token: server.adminToken })).body.findings).toHaveLength(2);

    for (const token of [stranger.token, undefined]) {
      const one = await api.get('/nodes/risky/versions/1.0.0', { token });
      expect(one.body).toMatchObject({ status: 'NodeVersionStatusFlagged' });
      expect(one.body.findings).toBeUndefined();
      const all = await api.get('/nodes/risky/versions?include_status_reason=true', { token });
      expect(all.body[0].findings).toBeUndefined();
    }
    expect((await api.get('/nodes/risky/install')).status).toBe(404);

    const lifted = await api.put('/publishers/acme/nodes/risky/versions/1.0.0', {
      token: server.adminToken,
      body: { status: 'NodeVersionStatusActive', status_reason: 'reviewed: installs its own dependency' },
    });
    expect(lifted.status, lifted.text).toBe(200);
    expect(lifted.body).toMatchObject({
      status: 'NodeVersionStatusActive',
      status_reason: 'reviewed: installs its own dependency',
    });
    expect((await api.get('/nodes/risky/install')).body).toMatchObject({
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
    });
  });

  it('a suppression comment does not hide a high finding on the registry: the reason is kept for the admin', async () => {
    const files = {
      'run.py':
        'import os\n\ndef go(cmd):\n    # nodereg: allow command-injection -- cmd comes from our own list\n    os.system(cmd)\n',
    };
    const uploaded = await publishArchive(server, owner, 'suppressed', '1.0.0', files);
    expect(uploaded).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: command-injection at run.py:5',
    });
    expect(uploaded.findings).toEqual([
      expect.objectContaining({ rule: 'command-injection', reason: 'cmd comes from our own list' }),
    ]);
    expect(uploaded.findings[0].suppressed).toBeUndefined();
  });

  it('a file too large to parse that names what a high rule looks for is Flagged for review (padded past 4 MiB, its os.system passed: Active); one that names nothing is Active', async () => {
    const padded = await publishArchive(server, owner, 'padded', '1.0.0', {
      'big.py': `import os\nos.system(cmd)\n${'#'.repeat(5 * 1024 * 1024)}\n`,
    });
    expect(padded).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason:
        'scan: could not scan big.py (5242906 bytes, over the limit of 4194304 bytes per file), which names what dynamic-execution, command-injection look for; an admin must review it',
    });
    const table = await publishArchive(server, owner, 'table', '1.0.0', {
      'table.py': `TABLE = [${'12345, '.repeat(800_000)}]\n`,
    });
    expect(table.status).toBe('NodeVersionStatusActive');
  });

  // Found from outside: `helper.py` harmless and `__pycache__/helper.cpython-311.pyc` compiled from other
  // code with an unchecked hash (py_compile's UNCHECKED_HASH): Python runs the .pyc in place of the source
  // without looking at it, the scan read only the source, and the version became Active.
  it('compiled Python (.pyc, .pyo), which the scan cannot read and Python may run in place of its source, is Flagged for review', async () => {
    const files = {
      '__init__.py': 'from . import helper\n',
      'helper.py': 'print("hello")\n',
      '__pycache__/helper.cpython-311.pyc': '\x00\x00\x00\x00bytecode',
    };
    const compiled = await publishArchive(server, owner, 'compiled', '1.0.0', files);
    expect(compiled).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: expect.stringContaining('__pycache__/helper.cpython-311.pyc'),
    });
    expect(compiled.status_reason).toMatch(/compiled Python/);
    const quiet = await publishArchive(server, owner, 'quiet-source', '1.0.0', { '__init__.py': 'import json\n' });
    expect(quiet.status).toBe('NodeVersionStatusActive');
  });

  it('medium findings alone, or none: Active, the findings kept', async () => {
    const medium = await publishArchive(server, owner, 'medium', '1.0.0', {
      'a.py': 'import sys\nsys.path.insert(0, "lib")\n',
    });
    expect(medium.status).toBe('NodeVersionStatusActive');
    expect(medium.status_reason ?? '').toBe(''); // unset strings are sent as "" (DESIGN §11)
    expect(medium.findings).toEqual([
      expect.objectContaining({ rule: 'environment-manipulation', severity: 'medium' }),
    ]);
    const clean = await publishArchive(server, owner, 'clean', '1.0.0', {
      'a.py': 'import json\n',
      'web/app.js': 'export const x = 1;\n',
    });
    expect(clean).toMatchObject({ status: 'NodeVersionStatusActive', findings: [] });
  });

  it('an empty Python file, deflated as zip tools write it (2 bytes), is read like any other entry', async () => {
    const uploaded = await publishArchive(server, owner, 'empty-init', '1.0.0', {
      '__init__.py': '',
      'nodes/run.py': RISKY['nodes/run.py'],
    });
    expect(uploaded).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: runtime-install at nodes/run.py:4',
    });
  });

  // 2,000 files when the figures are collected (the p95's target is stated for them), 500 in npm test
  const parsedFiles = figureLoad(500, 2000);
  it(`/healthz answers while a ${parsedFiles}-file archive is scanned`, async () => {
    const files: Record<string, string> = {};
    // every file imports sys and torch, so every one is parsed and queried
    const body =
      'import sys, torch\n\n' +
      Array.from({ length: 60 }, (_, i) => `def f${i}(x, y=${i}):\n    return torch.tensor([x * ${i}, y])\n`).join(
        '\n',
      );
    for (let i = 0; i < parsedFiles; i++) files[`pkg/part_${i % 20}/mod_${i}.py`] = body;
    files['pkg/part_0/load.py'] = 'import torch\nmodel = torch.load("model.pt")\n';
    const published = await publish(server, owner.token, 'acme', 'big', '1.0.0');
    const upload = uploadTo(published.body.signedUrl, await makeZip(files));
    const latencies = await healthzWhile(server, upload, 20);
    const uploaded = await upload;
    expect(uploaded.status, uploaded.text).toBe(200);
    expect(uploaded.body.findings).toEqual([
      expect.objectContaining({ rule: 'unsafe-deserialization', file: 'pkg/part_0/load.py' }),
    ]);
    expect(latencies.length).toBeGreaterThan(10); // the scan took a while: the polls overlapped it
    latency('scan.healthz_p95_ms', latencies, 0.95, `while a ${parsedFiles}-file archive is scanned`);
  }, 120_000); // the scan of every file parsed shares 2 cores with the other test files

  it('/healthz answers while 20 quiet sets made slow for the text gate are uploaded at once, and their memory is given back', async () => {
    // 4 files of 256 KiB (the inline gate's 1 MiB), each of runs of 1,023 letters: just short of a long
    // encoded literal, a run the obfuscation rule's search once read again from each of its letters
    const slow = ('a'.repeat(1023) + ' ').repeat(256);
    const zip = await makeZip(Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`slow_${i}.py`, slow])));
    const urls = await Promise.all(
      Array.from(
        { length: 20 },
        async (_, i) =>
          (await publish(server, owner.token, 'acme', `slow-gate-${i}`, '1.0.0')).body.signedUrl as string,
      ),
    );
    const uploads = Promise.all(urls.map((url) => uploadTo(url, zip)));
    let done = false;
    void uploads.finally(() => (done = true));
    const latencies: number[] = [];
    while (!done) {
      const started = performance.now();
      await (await fetch(`${server.url}/healthz`)).arrayBuffer();
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (const uploaded of await uploads)
      expect(uploaded.body).toMatchObject({ status: 'NodeVersionStatusActive', findings: [] });
    expect(server.server.uploadMemory.held).toBe(0);
    // a gate that holds the event loop (~0.9 s per upload before encodedRun) shows in the p99's figure
    latency('scan.slow_gate_healthz_p99_ms', latencies, 0.99, '20 sets slow for the text gate uploaded at once');
  });
});

describe('--scan warn and off', () => {
  it('warn keeps the findings and the version becomes Active; off scans nothing', async () => {
    for (const scan of ['warn', 'off'] as const) {
      const server = await startServer({ scan });
      try {
        const owner = await createUser(server);
        await createPublisher(server, owner, 'acme');
        const uploaded = await publishArchive(server, owner, 'risky', '1.0.0', RISKY);
        expect(uploaded.status).toBe('NodeVersionStatusActive');
        if (scan === 'warn')
          expect(uploaded.findings.map((f: { rule: string }) => f.rule)).toEqual([
            'runtime-install',
            'environment-manipulation',
          ]);
        else expect(uploaded.findings).toBeUndefined();
      } finally {
        await server.close();
      }
    }
  });
});

// A scan that cannot finish (docs/decisions.md): the upload stands, the server goes on answering, the
// version holds no findings (nothing is known), under `flag` it is Flagged with a reason that says what
// happened and no more, and the next upload gets a fresh worker.
describe('a scan that crashes or times out', () => {
  const healthy = async (server: TestServer) => {
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  };

  it('a worker that runs out of its heap: Flagged "could not finish (the scanner stopped)", the server answers, the next upload is scanned', async () => {
    const logged: string[] = [];
    const server = await startServer({ scanLimits: { maxOldGenerationSizeMb: 12 }, log: (line) => logged.push(line) });
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'acme');
      // 100,000 findings in one file: its text and one query piece's matches are more than a 12 MiB heap holds
      const crashing = await publishArchive(server, owner, 'heavy', '1.0.0', { 'run.py': 'eval(x)\n'.repeat(100_000) });
      expect(crashing).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: 'scan: could not finish (the scanner stopped); an admin must review it',
      });
      expect(crashing.findings).toBeUndefined();
      expect(
        logged.some((line) => /^scan of heavy 1\.0\.0 failed: .*memory/.test(line)),
        logged.join('\n'),
      ).toBe(true);
      await healthy(server);
      const next = await publishArchive(server, owner, 'risky', '1.0.0', RISKY);
      expect(next).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: 'scan: runtime-install at nodes/run.py:4',
      });
      expect((await client(server).get('/nodes/heavy/versions/1.0.0', { token: owner.token })).body).toMatchObject({
        status: 'NodeVersionStatusFlagged',
      });
    } finally {
      await server.close();
    }
  });

  it('a file of 270,000 findings is Flagged with its finding, 100 of them kept, the reason says "at least" (the upload took 9.7 s and 1.1 GB; every finding went through the worker)', async () => {
    const server = await startServer({ scanLimits: { timeoutMs: 120_000 } });
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'acme');
      const uploaded = await publishArchive(server, owner, 'many', '1.0.0', {
        'many.py': 'eval(x)\n'.repeat(270_000),
        'ok.py': 'import os\nos.system(cmd)\n',
      });
      expect(uploaded).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: 'scan: dynamic-execution at many.py:1, dynamic-execution at many.py:2 (and at least 99 more)',
      });
      // (and the info finding that the resolution layer stopped at its bound in many.py)
      expect(uploaded.findings.filter((f: { severity: string }) => f.severity !== 'info')).toHaveLength(
        SCAN_MAX_FINDINGS_PER_RULE + 1,
      );
      // the other file's high finding is kept too, however many the first file has
      expect(uploaded.findings.filter((f: { file: string }) => f.file === 'ok.py')).toHaveLength(1);
      await healthy(server);
    } finally {
      await server.close();
    }
  }, 180_000);

  it('files that do not parse (250 KiB of open brackets, 25,600 unclosed calls) are scanned within a 30 s limit: they held a worker for minutes', async () => {
    const server = await startServer({ scanLimits: { timeoutMs: 30_000 } });
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'acme');
      const uploaded = await publishArchive(server, owner, 'unparsed', '1.0.0', {
        'open.py': `import os\nos.system(cmd)\nx = ${'['.repeat(250 * 1024)}\n`,
        'calls.py': `import os\n${'os.system('.repeat(25_600)}\n`,
      });
      expect(uploaded).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: 'scan: command-injection at open.py:2',
      });
      await healthy(server);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('a call nested 120,000 brackets deep is scanned to its finding: it overflowed the worker\'s stack ("could not finish")', async () => {
    const server = await startServer({ scanLimits: { timeoutMs: 60_000 } });
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'acme');
      const uploaded = await publishArchive(server, owner, 'deep', '1.0.0', {
        'deep.py': `eval(${'['.repeat(120_000)}${']'.repeat(120_000)})\n`,
      });
      expect(uploaded).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: 'scan: dynamic-execution at deep.py:1',
      });
      await healthy(server);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('a scan over its time limit: Flagged "could not finish (the scan took longer than …)" under flag; under warn Active with no findings', async () => {
    for (const scan of ['flag', 'warn'] as const) {
      const server = await startServer({ scan, scanLimits: { timeoutMs: 1 } });
      try {
        const owner = await createUser(server);
        await createPublisher(server, owner, 'acme');
        for (const id of ['slow', 'slower']) {
          // the second upload gets a new worker (the timed-out one was ended), which times out too
          const uploaded = await publishArchive(server, owner, id, '1.0.0', RISKY);
          if (scan === 'flag') {
            expect(uploaded).toMatchObject({
              status: 'NodeVersionStatusFlagged',
              status_reason: 'scan: could not finish (the scan took longer than 1 ms); an admin must review it',
            });
          } else {
            expect(uploaded.status).toBe('NodeVersionStatusActive');
            expect(uploaded.status_reason ?? '').toBe('');
          }
          expect(uploaded.findings).toBeUndefined();
          await healthy(server);
        }
      } finally {
        await server.close();
      }
    }
  });
});

describe('the scan queue', () => {
  it("is bounded: with the workers busy and queueMax uploads waiting, 1,500 more are 503 with Retry-After before their bodies are read; /healthz answers and the server's memory stays flat", async () => {
    const queueMax = 2;
    // a server of its own process, to measure its memory; its held scans are cut when the test ends
    const child = await startChild(tempDir('nodereg-data-'), {
      // the scan queue's bound, not the caps of uploads in progress (upload-flood.test.ts), refuses the flood here
      options: { scanLimits: { queueMax, timeoutMs: 300_000 }, uploads: { perVersion: 10_000, perPublisher: 10_000 } },
    });
    const server = { url: child.url, adminToken: child.adminToken } as TestServer;
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'acme');
      // each holds a worker for ~13 s here: 120 files of ~390 KB that the text gate admits (they name requests) and the parser reads whole
      // (numbered lines: a source that packs within the archive's unpacked-to-packed ratio bound)
      const lines = Array.from(
        { length: 13_000 },
        (_, i) => `def f${i}(a, b):\n    return a + ${(i * 7919) % 100_003}\n`,
      );
      const source = `import requests\n${lines.join('')}`;
      const slow = await makeZip(Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`slow_${i}.py`, source])));
      const workers = Math.max(1, availableParallelism() - 1);
      for (let i = 0; i < workers + queueMax; i++) {
        const url = (await publish(server, owner.token, 'acme', 'slow', `1.0.${i}`)).body.signedUrl as string;
        void uploadTo(url, slow).catch(() => undefined);
      }
      const flood = (await publish(server, owner.token, 'acme', 'flood', '1.0.0')).body.signedUrl as string;
      const small = await makeZip({ 'run.py': 'import os\nos.system(cmd)\n' });
      // a probe whose checksum is wrong takes no place in the queue (400 once its body is in): 503 once the queue is full
      const probe = () => uploadTo(flood, small, { 'x-content-sha256': '0'.repeat(64) });
      let probed = await probe();
      for (const started = Date.now(); probed.status !== 503 && Date.now() - started < 60_000; probed = await probe()) {
        expect(probed.status, probed.text).toBe(400);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(probed.status, 'the queue never filled').toBe(503);

      // the queue full, the event loop is free: /healthz answers
      const latencies: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        await (await fetch(`${server.url}/healthz`)).arrayBuffer();
        latencies.push(performance.now() - started);
      }
      latency('scan.queue_full_healthz_p95_ms', latencies, 0.95, 'the scan queue full');

      // three rounds of 500 at once: past the first (pools warming up), what the server's JavaScript holds
      // after a collection stays where it was (a leak grows it), and so does its RSS, within what malloc
      // may keep of freed memory on a loaded machine
      const rss: number[] = [];
      const held: number[] = [];
      for (let round = 0; round < 3; round++) {
        const refused = await Promise.all(Array.from({ length: 500 }, () => uploadTo(flood, small)));
        expect(new Set(refused.map((reply) => reply.status))).toEqual(new Set([503]));
        expect(refused[0].body).toEqual({
          error: 'unavailable',
          message: expect.stringContaining('waiting for their scan'),
        });
        expect(refused[0].headers.get('retry-after')).toBe(String(SCAN_QUEUE_RETRY_AFTER_S));
        const memory = await child.memory();
        rss.push(memory.rss);
        held.push(memory.held);
      }
      const mib = (bytes: number[]) => bytes.map((b) => Math.round(b / 1024 / 1024)).join(', ');
      expect(
        (held[2] - held[0]) / 1024 / 1024,
        `server heap and Buffers after each round: ${mib(held)} MiB`,
      ).toBeLessThan(16);
      expect((rss[2] - rss[0]) / 1024 / 1024, `server RSS after each round: ${mib(rss)} MiB`).toBeLessThan(64);
      // nothing was stored for the refused uploads: the version still waits for its archive
      expect((await client(server).get('/nodes/flood/versions/1.0.0', { token: owner.token })).body).toMatchObject({
        status: 'NodeVersionStatusPending',
      });
    } finally {
      await child.kill();
    }
  }, 120_000);
});

describe("the scan worker's memory", () => {
  it("is given back after a large file: the parser's WebAssembly memory never shrinks, so its worker is ended (the server stayed at ~970 MB after one 4 MiB file)", async () => {
    const child = await startChild(tempDir('nodereg-data-'));
    const server = { url: child.url, adminToken: child.adminToken } as TestServer;
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'acme');
      const before = (await child.memory()).rss;
      // one line of 4 MiB of statements: ~0.5-1 GB of parser memory in the worker while it is read
      const uploaded = await publishArchive(server, owner, 'minified', '1.0.0', {
        'min.py': `${'x=1;'.repeat(1024 * 1024 - 8)}import os;os.system(c)\n`,
      });
      expect(uploaded.status_reason).toBe('scan: command-injection at min.py:1');
      const after = (await child.memory()).rss;
      // a wide margin: what a worker holds after such a file is several times this
      expect(after - before).toBeLessThan(300 * 1024 * 1024);
      // the next upload is scanned by a new worker
      expect((await publishArchive(server, owner, 'risky', '1.0.0', RISKY)).status_reason).toBe(
        'scan: runtime-install at nodes/run.py:4',
      );
    } finally {
      await child.kill();
    }
  }, 120_000);
});

describe('the scan of the bytes the zip check kept', () => {
  it('finds what the scan of the archive read again finds, without the file, and leaves the kept bytes whole', async () => {
    const path = join(tempDir(), 'node.zip');
    writeFileSync(path, await makeZip({ ...RISKY, 'quiet.py': 'x = 1\n' }));
    const worker = new ScanWorker({ timeoutMs: 60_000, maxOldGenerationSizeMb: 256 });
    try {
      const fromFile = await validateZip(path, { maxUnpacked: 1 << 20, memory: new MemoryBudget(0) });
      const kept = await validateZip(path, { maxUnpacked: 1 << 20, memory: new MemoryBudget(1 << 20) });
      expect(fromFile.scannable.some((entry) => entry.data)).toBe(false);
      expect(kept.scannable.every((entry) => entry.data)).toBe(true);
      const expected = await scanArchive(worker, path, fromFile.scannable, { server: true });
      expect(expected.findings.map((f) => f.rule)).toContain('runtime-install');
      rmSync(path); // the kept bytes are all the scan reads now
      expect(await scanArchive(worker, path, kept.scannable, { server: true })).toEqual(expected);
      // the worker got a copy of them: the entries' own memory (maybe Buffer's pool) was not handed over
      expect(Buffer.from(kept.scannable.find((entry) => entry.path === 'quiet.py')!.data!).toString()).toBe('x = 1\n');
    } finally {
      await worker.stop();
    }
  });

  it("a small set is first read by the text gate on the event loop: the same findings as the worker's scan of every file", async () => {
    const clean = (i: number) => `def f${i}(x):\n    return x * ${i}\n`;
    const sets: Record<string, string>[] = [
      { 'a.py': clean(1), 'b.py': clean(2) }, // nothing admitted: decided without the worker
      { 'a.py': clean(1), 'm.py': RISKY['nodes/run.py'], 'z.py': clean(3), 'web/x.js': 'eval(input)\n' }, // from m.py on, to the worker
      { ...RISKY, 'quiet.py': clean(4) },
    ];
    const scanner = createUploadScanner('flag', () => {});
    const found: number[] = [];
    try {
      for (const files of sets) {
        const path = join(tempDir(), 'node.zip');
        writeFileSync(path, await makeZip(files));
        const kept = await validateZip(path, { maxUnpacked: 1 << 20, memory: new MemoryBudget(1 << 20) });
        const read = await validateZip(path, { maxUnpacked: 1 << 20, memory: new MemoryBudget(0) });
        expect(kept.scannable.every((entry) => entry.data)).toBe(true);
        const everyFile = await scanner.scan(path, read.scannable, 'read', 'acme');
        expect(await scanner.scan(path, kept.scannable, 'kept', 'acme')).toEqual(everyFile);
        found.push(everyFile!.findings!.length);
      }
      expect(found[0]).toBe(0);
      expect(found[1]).toBeGreaterThan(1); // m.py's and x.js's
      expect(found[2]).toBeGreaterThan(0);
    } finally {
      await scanner.close();
    }
  });

  it('a node whose files admit no rule needs no worker: under a 1 ms time limit it is Active, one with a risky file is not', async () => {
    const server = await startServer({ scanLimits: { timeoutMs: 1 } });
    try {
      const owner = await createUser(server);
      await createPublisher(server, owner, 'acme');
      const quiet = await publishArchive(server, owner, 'quiet', '1.0.0', {
        '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
        'nodes/math.py': 'def add(a, b):\n    return a + b\n',
      });
      expect(quiet).toMatchObject({ status: 'NodeVersionStatusActive', findings: [] });
      const risky = await publishArchive(server, owner, 'risky', '1.0.0', RISKY);
      expect(risky).toMatchObject({
        status: 'NodeVersionStatusFlagged',
        status_reason: 'scan: could not finish (the scan took longer than 1 ms); an admin must review it',
      });
    } finally {
      await server.close();
    }
  });
});
