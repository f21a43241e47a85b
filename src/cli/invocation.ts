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

/** A global flag the user typed, which every command a hint prints must carry too (`--profile bob`). */
export type TypedFlag = readonly [flag: string, value: string];

/** Commands that work on a data dir, not against a registry: a profile or a registry URL means nothing to them. */
const DATA_DIR_COMMANDS = new Set(['serve', 'backup', 'restore']);

/**
 * Text with every command `nodereg …` (at a line's start, indented or not, after a backtick, `$(`,
 * `| `, `&& ` or `: `) written as the user runs it, with the global flags typed (`flags`) that the
 * command does not name itself: a hint then runs against the same profile and registry.
 */
export function asInvoked(text: string, command: string, flags: readonly TypedFlag[] = []): string {
  if (command === 'nodereg' && flags.length === 0) return text;
  // In backticks the flags go last, where a reader expects options; elsewhere the command's end is not known.
  const flagged = text.replace(
    /`nodereg ([^`\n]*)`/g,
    (_, rest: string) => `\`nodereg ${rest}${missing(rest, flags)}\``,
  );
  return flagged.replace(
    /(^\s*|`|\$\(|\| |&& |: )nodereg(?= [a-z-])/gm,
    (match: string, before: string, offset: number, whole: string) =>
      `${before}${command}${missing(commandRest(whole, offset + match.length), flags)}`,
  );
}

/** The typed flags the command `rest` lacks, as words to add; none for a command that works on a data dir. */
function missing(rest: string, flags: readonly TypedFlag[]): string {
  const words = rest.trim().split(/\s+/);
  if (DATA_DIR_COMMANDS.has(words[0])) return '';
  return flags
    .filter(([flag]) => !words.some((word) => word === flag || word.startsWith(`${flag}=`)))
    .map(([flag, value]) => ` ${flag} ${shellWord(value)}`)
    .join('');
}

/** The rest of a command in `text` from `start`: up to its closing backtick, else to the line's end. */
function commandRest(text: string, start: number): string {
  const ends = [text.indexOf('`', start), text.indexOf('\n', start)].filter((at) => at >= 0);
  return text.slice(start, ends.length ? Math.min(...ends) : undefined);
}

/** A word of a command line as a POSIX shell reads it back: quoted only when it must be. */
export const shellWord = (value: string) =>
  /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
