#!/usr/bin/env node
// `npm run soak`: the reliability tests (the test files that take their run counts from test/figures.ts)
// with their run counts raised (NODEREG_SOAK=1), then a summary of the figures they report, with the
// machine they ran on. RELIABILITY.md quotes the last run.
// NODEREG_SEED=N replays a run (the fuzzers' seed); otherwise one is drawn and printed.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, platform, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const figuresFile = join(tmpdir(), `nodereg-soak-${process.pid}.jsonl`);
const seed = process.env.NODEREG_SEED ?? String(Math.floor(Math.random() * 2 ** 31));
const started = Date.now();

const reliabilityTests = readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts') && readFileSync(join(root, 'test', file), 'utf8').includes('figures.js'))
  .map((file) => join('test', file));

console.log(`soak: seed ${seed} (replay with NODEREG_SEED=${seed} npm run soak)`);
const vitest = spawn(
  process.execPath,
  [
    join(root, 'node_modules/vitest/vitest.mjs'),
    'run',
    ...reliabilityTests,
    '--testTimeout=3600000',
    '--hookTimeout=600000',
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODEREG_SOAK: '1', NODEREG_SEED: seed, NODEREG_FIGURES: figuresFile },
  },
);
const code = await new Promise((done) => vitest.on('close', (status) => done(status ?? 1)));

let figures = [];
try {
  figures = readFileSync(figuresFile, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
} catch {
  // no figure was reported
}
rmSync(figuresFile, { force: true });

const minutes = ((Date.now() - started) / 60_000).toFixed(1);
const cpu = cpus();
console.log(`\n## Soak figures (${code === 0 ? 'all tests passed' : `FAILED with exit code ${code}`})\n`);
console.log(
  `Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${platform()} ${release()}, Node ${process.version}`,
);
console.log(`Seed ${seed}; ${minutes} minutes.\n`);
console.log('| figure | value | detail |');
console.log('|---|---:|---|');
for (const { name, value, detail } of figures) console.log(`| ${name} | ${value} | ${detail} |`);
process.exit(code);
