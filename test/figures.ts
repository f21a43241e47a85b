// Run counts for `npm test` (quick) and `npm run soak` (NODEREG_SOAK=1), and the figures each test
// reports: printed, and appended as JSON lines to $NODEREG_FIGURES when set (the soak collects them
// into its summary for RELIABILITY.md).
import { appendFileSync } from 'node:fs';
import { expect } from 'vitest';

export const SOAK = process.env.NODEREG_SOAK === '1';

/** `quick` in npm test, `soak` in npm run soak. */
export const runs = (quick: number, soak: number) => (SOAK ? soak : quick);

/**
 * The size of a figure's load: `full` (the size its target in bench/latency.js is stated for) when the
 * figures are collected ($NODEREG_FIGURES: `npm run bench latency`, the soak), `quick` in npm test, where
 * the test shows only that the server answers under that load.
 */
export const figureLoad = (quick: number, full: number) => (process.env.NODEREG_FIGURES ? full : quick);

/** The fast-check seed: fixed in npm test; in the soak NODEREG_SEED or a random one (printed, to replay). */
export const SEED = SOAK ? Number(process.env.NODEREG_SEED ?? Math.floor(Math.random() * 2 ** 31)) : 20261122;

export function figure(name: string, value: number | string, detail = ''): void {
  const line = { name, value, detail, soak: SOAK, seed: SEED };
  console.log(`[figure] ${name}: ${value}${detail ? ` (${detail})` : ''}`);
  if (process.env.NODEREG_FIGURES) appendFileSync(process.env.NODEREG_FIGURES, `${JSON.stringify(line)}\n`);
}

/** The only time bound a test puts on an answer: it came at all. No load on a shared machine breaks it. */
export const ANSWERED_WITHIN_MS = 10_000;

/**
 * A latency (ms) at `quantile` of `values`, reported as figure `name`: `npm run bench latency`
 * (bench/latency.js) runs the test and holds the figure to its target, as speed belongs in bench/.
 * The test asserts only that every answer came within ANSWERED_WITHIN_MS.
 */
export function latency(name: string, values: number[], quantile: number, detail = ''): number {
  const sorted = [...values].sort((a, b) => a - b);
  const value = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * quantile))] ?? 0;
  figure(
    name,
    value.toFixed(1),
    `${sorted.length} answers, slowest ${(sorted.at(-1) ?? 0).toFixed(0)} ms${detail ? `; ${detail}` : ''}`,
  );
  expect(sorted.at(-1) ?? 0, `${name}: the slowest answer (ms)`).toBeLessThan(ANSWERED_WITHIN_MS);
  return value;
}
