// A file at the resolution layer's bound (RESOLVE_LIMITS.budget syntax nodes) on the registry: its
// upload scan finishes within the scan's budget (parsed, not given up), says the file was not fully
// analysed (info), and /healthz keeps answering meanwhile (figure scan.analysis_bound_healthz_p95_ms,
// held to its target by `npm run bench latency`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOLVE_LIMITS } from '../../src/scan/resolve/index.js';
import { latency } from '../figures.js';
import { startServer, type TestServer } from '../helpers.js';
import {
  createPublisher,
  healthzWhile,
  createUser,
  makeZip,
  publish,
  uploadTo,
  type TestUser,
} from '../server/fixtures.js';

describe('a file at the analysis bound, on the registry', () => {
  let server: TestServer;
  let owner: TestUser;
  beforeAll(async () => {
    server = await startServer({ accessLog: false });
    owner = await createUser(server);
    await createPublisher(server, owner, 'acme');
  });
  afterAll(() => server.close());

  it('is scanned to its end within the budget, reported as not fully analysed; /healthz answers meanwhile', async () => {
    // one statement more than the layer visits; `subprocess` makes the layer read the file
    const big = `import subprocess\n${'y = 1\n'.repeat(RESOLVE_LIMITS.budget + 1)}`;
    const published = await publish(server, owner.token, 'acme', 'at-bound', '1.0.0');
    expect(published.status, published.text).toBe(201);
    const upload = uploadTo(
      published.body.signedUrl,
      await makeZip({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n', 'big.py': big }),
    );
    const latencies = await healthzWhile(server, upload, 20);
    const uploaded = await upload;
    expect(uploaded.status, uploaded.text).toBe(200);
    expect(uploaded.body.status).toBe('NodeVersionStatusActive');
    expect(
      uploaded.body.findings.map(
        (f: { rule: string; severity: string; file: string }) => `${f.file} ${f.rule} ${f.severity}`,
      ),
    ).toEqual(['big.py not-fully-analysed info']);
    latency('scan.analysis_bound_healthz_p95_ms', latencies, 0.95, 'while a file at the analysis bound is scanned');
  }, 120_000);
});
