// `npm run bench [section…]`: measures side by side in one run and writes bench/results.md.
// Benchmarks never fail: they report ratios against floors and peers.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { machine, renderTable } from './lib.js';

const sections = {
  startup: () => import('./startup.js'),
  pack: () => import('./pack.js'),
  scan: () => import('./scan.js'),
  serve: () => import('./serve.js'),
  publish: () => import('./publish.js'),
  scale: () => import('./scale.js'),
  instances: () => import('./instances.js'),
  pgwrites: () => import('./pg-writes.js'),
  latency: () => import('./latency.js'),
  web: () => import('./web.js'),
};

const wanted = process.argv.slice(2);
const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(', ');
const started = Date.now();
const loadBefore = loadAverage();
const rows = [];
const notes = [];
for (const [name, load] of Object.entries(sections)) {
  if (wanted.length && !wanted.includes(name)) continue;
  process.stderr.write(`bench: ${name}…\n`);
  try {
    const result = await (await load()).default();
    rows.push(...(Array.isArray(result) ? result : result.rows));
    if (result.notes) notes.push(...result.notes);
  } catch (error) {
    notes.push(`${name}: not measured (${error.message})`);
  }
}

notes.push(
  `the machine's load average (1, 5, 15 min) was ${loadBefore} at the start and ${loadAverage()} at the end; the whole run took ${((Date.now() - started) / 60_000).toFixed(1)} min`,
);

const text = [
  '# Benchmark results',
  '',
  `Run on ${new Date().toISOString().slice(0, 10)}: ${machine()}. Medians of repeated runs; ratios are measured side by side in the same run.`,
  '',
  renderTable(rows),
  '',
  ...notes.map((n) => `- ${n}`),
  '',
].join('\n');
process.stdout.write(`${text}\n`);
if (!wanted.length) writeFileSync(resolve(import.meta.dirname, 'results.md'), text);
