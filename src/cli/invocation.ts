// How the user started this CLI, so that the commands a hint prints run as printed.
import { delimiter, dirname, isAbsolute, relative, sep } from 'node:path';

/**
 * `nodereg` when it runs by that name from a dir on PATH; `npx nodereg` from a project's
 * node_modules/.bin; else `node <script>` (a checkout: `node bin/nodereg.js`), the script relative
 * to the working dir when it is below it.
 */
export function invocation(
  script = process.argv[1] ?? '',
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): string {
  const dir = dirname(script);
  if (dir.endsWith(`${sep}node_modules${sep}.bin`)) return 'npx nodereg';
  if (script.endsWith(`${sep}nodereg`) && (env.PATH ?? '').split(delimiter).includes(dir)) return 'nodereg';
  const below = relative(cwd, script);
  return `node ${below && !below.startsWith('..') && !isAbsolute(below) ? below : script}`;
}

/**
 * Text with every command `nodereg …` (at a line's start, indented or not, after a backtick, `$(`,
 * `| `, `&& ` or `: `) written as the user runs it.
 */
export function asInvoked(text: string, command: string): string {
  if (command === 'nodereg') return text;
  return text.replace(/(^\s*|`|\$\(|\| |&& |: )nodereg(?= [a-z-])/gm, (_, before: string) => `${before}${command}`);
}

/** A word of a command line as a POSIX shell reads it back: quoted only when it must be. */
export const shellWord = (value: string) =>
  /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
