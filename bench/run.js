// `npm run bench [section…]`: measures side by side in one run and writes bench/results.md.
// Benchmarks never fail: they report ratios against floors and peers.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { machine, renderTable } from './lib.js';

const sections = {
  startup: () => import('./startup.js'),
  pack: () => import('./pack.js'),
  serve: () => import('./serve.js'),
  publish: () => import('./publish.js'),
  scale: () => import('./scale.js'),
};

const wanted = process.argv.slice(2);
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
