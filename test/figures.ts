// Run counts for `npm test` (quick) and `npm run soak` (NODEREG_SOAK=1), and the figures each test
// reports: printed, and appended as JSON lines to $NODEREG_FIGURES when set (the soak collects them
// into its summary for RELIABILITY.md).
import { appendFileSync } from 'node:fs';

export const SOAK = process.env.NODEREG_SOAK === '1';

/** `quick` in npm test, `soak` in npm run soak. */
export const runs = (quick: number, soak: number) => (SOAK ? soak : quick);

/** The fast-check seed: fixed in npm test; in the soak NODEREG_SEED or a random one (printed, to replay). */
export const SEED = SOAK ? Number(process.env.NODEREG_SEED ?? Math.floor(Math.random() * 2 ** 31)) : 20261122;

export function figure(name: string, value: number | string, detail = ''): void {
  const line = { name, value, detail, soak: SOAK, seed: SEED };
  console.log(`[figure] ${name}: ${value}${detail ? ` (${detail})` : ''}`);
  if (process.env.NODEREG_FIGURES) appendFileSync(process.env.NODEREG_FIGURES, `${JSON.stringify(line)}\n`);
}
