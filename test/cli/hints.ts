// Every `nodereg …` command a run's hints print, read back as argv so a test can run it as printed.
import { hintedCommands } from './hint-check.js';
import { runInProcess, type InProcessOptions, type InProcessResult } from './in-process.js';

export { hintedCommands, shellWords } from './hint-check.js';

/** Runs every command the hints of `stderr` print, in-process with `options`; their results in order. */
export async function runHints(
  stderr: string,
  options: InProcessOptions = {},
): Promise<{ argv: string[]; result: InProcessResult }[]> {
  const ran: { argv: string[]; result: InProcessResult }[] = [];
  for (const argv of hintedCommands(stderr)) ran.push({ argv, result: await runInProcess(argv, options) });
  return ran;
}
