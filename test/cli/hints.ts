// Every `nodereg …` command a run's hints print, read back as argv so a test can run it as printed.
import { commandsOf, hintsOf } from './hint-check.js';
import { runInProcess, type InProcessOptions, type InProcessResult } from './in-process.js';

export { hintedCommands, shellWords } from './hint-check.js';

/**
 * Runs every command the hints of a run print (its stderr, or both streams: with --json the hint is a
 * field of stdout's JSON), in-process with `options`; their results in order.
 */
export async function runHints(
  output: string | { stdout: string; stderr: string },
  options: InProcessOptions = {},
): Promise<{ argv: string[]; result: InProcessResult }[]> {
  const { stdout, stderr } = typeof output === 'string' ? { stdout: '', stderr: output } : output;
  const ran: { argv: string[]; result: InProcessResult }[] = [];
  for (const argv of hintsOf(stdout, stderr).flatMap(commandsOf))
    ran.push({ argv, result: await runInProcess(argv, options) });
  return ran;
}
