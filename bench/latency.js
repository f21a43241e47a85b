// Latency under load that no test can bound on a shared machine: the tests that measure /healthz while
// the server does hard work (scans, long lists, hostile input, large bodies) report figures; this runs
// those tests once, reads their figures (test/figures.ts writes them to $NODEREG_FIGURES) and holds each
// to its target. The tests themselves assert only that every answer came. Runnable alone:
// `npm run bench latency`.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { row } from './lib.js';

const root = resolve(import.meta.dirname, '..');

/** figure name → what it measures and its target, in ms (the zip's check: in s). */
const TARGETS = {
  'hostile.healthz_p99_ms': ['/healthz p99 while hostile input is sent', 100],
  'scan.healthz_p95_ms': ['/healthz p95 while a 2,000-file archive is scanned', 100],
  'scan.slow_gate_healthz_p99_ms': ['/healthz p99 while 20 sets slow for the scan text gate upload', 100],
  'scan.analysis_bound_healthz_p95_ms': ['/healthz p95 while a file at the analysis bound is scanned', 100],
  'scan.queue_full_healthz_p95_ms': ['/healthz p95 with the scan queue full', 100],
  'scan.slow_parse_healthz_max_ms': ['/healthz slowest of 10 while a worker parses slow files', 250],
  'classes.healthz_p95_ms': ['/healthz p95 while the node classes of a 2,000-file archive are extracted', 100],
  'scan.publisher_flood_healthz_max_ms': ["/healthz slowest of 10 after one publisher's upload flood", 250],
  'versions.list_3000_healthz_max_ms': ['/healthz slowest while a 3,000-version list is rebuilt', 150],
  'zip.empty_entries_65535_healthz_max_ms': ['/healthz slowest while a zip of 65,535 entries is checked', 1000],
  'zip.empty_entries_65535_s': ['upload and check of a zip of 65,535 entries (s)', 20],
  'proxy.sandbox_large_bodies_healthz_p99_ms': ['/healthz p99 with four 25 MiB AI proxy bodies (sandbox)', 150],
  'proxy.forward_large_bodies_healthz_p99_ms': ['/healthz p99 with four 25 MiB AI proxy bodies (forward)', 150],
  'uploads.memory_budget_healthz_max_ms': ['/healthz slowest during 128 uploads on a small memory budget', 2000],
  'mirror.healthz_upstream_hangs_max_ms': ['/healthz slowest of 10 while the upstream of a mirror hangs', 100],
  'mirror.uncached_504_upstream_stopped_max_ms': ['an uncached mirror read, slowest of 5, with upstream stopped', 500],
};

const FILES = [
  'test/server/http/hostile-input.test.ts',
  'test/scan/registry-scan.test.ts',
  'test/scan/worker-budget.test.ts',
  'test/scan/analysis-bound.test.ts',
  'test/scan/upload-node-classes.test.ts',
  'test/server/reads/long-version-lists.test.ts',
  'test/server/uploads/zip-names.test.ts',
  'test/proxy/large-bodies.test.ts',
  'test/server/uploads/memory-budget.test.ts',
  'test/mirror/upstream-failures.test.ts',
];

export default async function latency() {
  const figuresFile = join(tmpdir(), `nodereg-latency-${process.pid}.jsonl`);
  // one file at a time, so each measures the server alone
  const failed = FILES.filter((file) => {
    const run = spawnSync(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', file], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, NODEREG_FIGURES: figuresFile },
    });
    return run.status !== 0;
  });
  let figures = [];
  try {
    figures = readFileSync(figuresFile, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  } catch {
    // no figure was reported
  } finally {
    rmSync(figuresFile, { force: true });
  }
  const measured = new Map(figures.map((f) => [f.name, Number(f.value)]));
  const rows = Object.entries(TARGETS).map(([name, [label, target]]) => {
    const value = measured.get(name);
    const unit = name.endsWith('_s') ? 's' : 'ms';
    if (value === undefined)
      return row(`latency: ${label}`, 'not measured', `target ${target} ${unit}`, 0, `< ${target} ${unit}`, false);
    return row(
      `latency: ${label}`,
      `${value} ${unit}`,
      `target ${target} ${unit}`,
      value / target,
      `< ${target} ${unit}`,
      value < target,
    );
  });
  return {
    rows,
    notes: [
      `latency: figures of ${FILES.length} test files run one at a time (${failed.length ? `failed: ${failed.join(', ')}` : 'all passed'})`,
    ],
  };
}
