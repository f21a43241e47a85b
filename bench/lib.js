// Shared by the benchmarks: medians of repeated runs, ratios, and the results table.
import { spawnSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';

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

export const machine = () => `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;

/** One row of the results table. */
export function row(name, measured, against, ratio, target, ok) {
  return { name, measured, against, ratio: ratio.toFixed(2), target, verdict: ok === undefined ? '' : ok ? 'met' : 'missed' };
}

export function renderTable(rows) {
  const header = '| benchmark | measured | against | ratio | target | verdict |\n|---|---|---|---|---|---|';
  return [header, ...rows.map((r) => `| ${r.name} | ${r.measured} | ${r.against} | ${r.ratio} | ${r.target} | ${r.verdict} |`)].join('\n');
}
