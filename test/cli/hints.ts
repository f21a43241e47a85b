// Every `nodereg …` command a run's hints print, read back as argv so a test can run it as printed.
import { runInProcess, type InProcessOptions, type InProcessResult } from './in-process.js';

/** The words of a command line as a POSIX shell splits them (single and double quotes; no expansions). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The commands in backticks of the `hint:` lines of `stderr`, each as argv without `nodereg`. */
export function hintedCommands(stderr: string): string[][] {
  const commands: string[][] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('hint:')) continue;
    for (const [, command] of line.matchAll(/`nodereg ([^`]+)`/g)) commands.push(shellWords(command));
  }
  return commands;
}

/** Runs every command the hints of `stderr` print, in-process with `options`; their results in order. */
export async function runHints(
  stderr: string,
  options: InProcessOptions = {},
): Promise<{ argv: string[]; result: InProcessResult }[]> {
  const ran: { argv: string[]; result: InProcessResult }[] = [];
  for (const argv of hintedCommands(stderr)) ran.push({ argv, result: await runInProcess(argv, options) });
  return ran;
}
