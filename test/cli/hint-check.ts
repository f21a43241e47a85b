// Every CLI run of the tests (runInProcess, runCli, serve-helper…) hands its output here: each command
// its hints print in backticks must parse, as printed, with the real program (`parseOnly` stops it
// before the action: no request, no file written). A hint that does not parse fails the test that
// printed it. With NODEREG_HINT_RECORD=file set, every hint checked and its outcome are appended to that
// file as JSON lines instead (a survey of the hints a set of tests prints; nothing fails then).
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, CommanderError } from 'commander';
import { expect } from 'vitest';
import type { RunDeps } from '../../src/cli/context.js';

/** The words of a command line as a POSIX shell splits them (single and double quotes; no expansions). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"') {
      // an unclosed quote runs to the end of the line (shellHazard names it)
      const end = line.indexOf(c, i + 1) === -1 ? line.length : line.indexOf(c, i + 1);
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

/**
 * What in `line` a shell would act on rather than pass on as text (`;`, `&`, `|`, `(`,
 * `)`, a backtick, `$(`), outside quotes or inside double quotes; `$NAME` is left alone (a hint may
 * name a variable on purpose). A hint that prints user text unquoted runs something else when copied.
 */
export function shellHazard(line: string): string | undefined {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') i++;
    else if (c === quote) quote = undefined;
    else if (!quote && (c === "'" || c === '"')) quote = c;
    else if (c === '`' || (c === '$' && line[i + 1] === '('))
      return `a command substitution ${line.slice(i, i + 2).trim()}`;
    else if (!quote && /[;&|()]/.test(c)) return `an unquoted ${c}`;
  }
  return quote && `an unclosed ${quote}`;
}

/** A command in backticks as the CLI prints it: `nodereg …`, `npx nodereg …` or `node …/nodereg.js …`. */
const COMMAND = /`(?:npx nodereg|nodereg|node \S*nodereg\.js) ([^`]+)`/g;

/** The commands in backticks of `text` (one hint), each as argv without `nodereg`. */
export function commandsOf(text: string): string[][] {
  return [...text.matchAll(COMMAND)].map(([, command]) => shellWords(command));
}

/** The commands in backticks of the `hint:` lines of `stderr`, each as argv without `nodereg`. */
export function hintedCommands(stderr: string): string[][] {
  return hintsOf('', stderr).flatMap(commandsOf);
}

/** Every `hint` field, and the message of every `hint` record, of the JSON values in `value`. */
function jsonHints(value: unknown, into: string[]): void {
  if (Array.isArray(value)) for (const item of value) jsonHints(item, into);
  else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.hint === 'string') into.push(record.hint);
    if (record.level === 'hint' && typeof record.message === 'string') into.push(record.message);
    for (const [key, item] of Object.entries(record)) if (key !== 'hint') jsonHints(item, into);
  }
}

/** The hints of a run: `hint:` lines, and hints in the JSON it printed (one document, or JSON lines). */
export function hintsOf(stdout: string, stderr: string): string[] {
  const hints: string[] = [];
  for (const text of [stdout, stderr]) {
    for (const drawn of text.split('\n')) {
      // a terminal's line as it shows: after the last carriage return, without colours
      const line = drawn.slice(drawn.lastIndexOf('\r') + 1).replace(/\x1b\[[\d;]*[A-Za-z]/g, '');
      if (line.startsWith('hint:')) hints.push(line.slice('hint:'.length).trim());
      else if (line.startsWith('{')) jsonHints(parsed(line), hints);
    }
    if (/^\s*[[{]/.test(text)) jsonHints(parsed(text), hints);
  }
  return [...new Set(hints)];
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Placeholders as a value, an option's `=value` or a part of one: `[dir]`, `...`. */
const MARKED = /^(?:\[[^\]]*\]|\.\.\.|…)$/;
/** Placeholders anywhere in a value: `<id>`, `{id}` (`--sarif <name>.sarif`, `report-{id}.json`). */
const ENCLOSED = /<[^<>]*>|\{\w+\}/;
/** A word in capitals: `URL` and `NODE_ID` are placeholders, `ACME` or `MIT` a value (see `namesItsSlot`). */
const CAPITALS = /^[A-Z][A-Z\d_]*[A-Z]$/;
/** Kinds of value a hint writes in capitals where the value goes (`--sarif OUT`, `config set registry URL`). */
const VALUE_KINDS = ['url', 'id', 'name', 'token', 'file', 'path', 'dir', 'out', 'value', 'key', 'text', 'email'];
const valuesOf = (argv: string[]) => argv.map((word) => word.slice(word.indexOf('=') + 1));
/** The parts of a value that a placeholder may be: the value, and what `@`, `/`, `:`, `,` or `=` join in it. */
const partsOf = (value: string) => [value, ...value.split(/[@/:,=]/)];
/** An e-mail address (`ADMIN@ACME.COM`): a value, whatever its case. */
const EMAIL = /^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$/;
/**
 * The words of a value that may be placeholders in capitals (`ID@VERSION`, `FILES...`): none in a value
 * with a space, which is text (`--description "Adds ID tags"`), nor a shell variable (`"$DATABASE_URL"`).
 */
const capitalWordsOf = (value: string) =>
  /\s/.test(value) || EMAIL.test(value) ? [] : value.replace(/\$\{?\w+\}?/g, ' ').split(/[^A-Za-z\d_]+/);

/**
 * The words naming the slots of `command` and of its parents: each option's flags and value, each argument,
 * and the commands' own names (`PUBLISHER_ID` in `publisher show`).
 */
function slotWords(command: Command): Set<string> {
  const words = new Set(VALUE_KINDS);
  for (let at: Command | null = command; at; at = at.parent) {
    const names = [
      at.name(),
      ...at.options.map((option) => option.flags),
      ...at.registeredArguments.map((arg) => arg.name()),
    ];
    for (const name of names)
      for (const word of name
        .replace(/([a-z])([A-Z])/g, '$1 $2')
        .toLowerCase()
        .split(/[^a-z\d]+/))
        if (word) words.add(word);
  }
  return words;
}

/**
 * A word in capitals is a placeholder when each of its words names the slot it stands in (`--name NAME`,
 * `show PUBLISHER_ID` for `show <id>`) or a kind of value (`URL`), also in the plural (`IDS`, `NODE_IDS`,
 * `FILES`); otherwise it is a value the command takes as it is (`--name ACME`, a licence `MIT`, a node id
 * `URL_TOOLS`).
 */
const namesItsSlot = (word: string, slots: Set<string>) =>
  CAPITALS.test(word) &&
  word
    .toLowerCase()
    .split('_')
    .every((part) => [part, part.replace(/s$/, ''), part.replace(/es$/, '')].some((name) => slots.has(name)));

/** The first placeholder in capitals among `values`, by the slots of the command they are given to. */
const capitalPlaceholder = (values: string[], slots: Set<string>) =>
  values.flatMap(capitalWordsOf).find((word) => namesItsSlot(word, slots));

/** Why `argv` does not parse as printed, or '' when it does (commander's own message). Kept per line. */
const outcomes = new Map<string, Promise<string>>();
let home: string | undefined;

/**
 * Runs the real program on `argv` up to the command's action, which a hook added through commander's
 * API stops (a CommanderError with exit code 0: the run exits 0, printing nothing): no request is sent,
 * no file written. The exit code and stderr are commander's for a line that does not parse.
 */
export async function parseOnly(argv: string[], deps: RunDeps = {}): Promise<{ code: number; stderr: string }> {
  const { prepareRun } = await import('../../src/cli/program.js');
  let stderr = '';
  const prepared = await prepareRun(argv, '0.0.0-test', {
    stdout: { write: () => true },
    stderr: { write: (chunk: string) => ((stderr += chunk), true) },
    ...deps,
  });
  let placeholder: string | undefined;
  prepared.program.hook('preAction', (_program, command) => {
    const slots = slotWords(command);
    placeholder = capitalPlaceholder(valuesOf(argv), slots);
    throw new CommanderError(0, 'nodereg.parsed', 'parsed, not run');
  });
  const code = await prepared.run();
  return placeholder ? { code: 2, stderr: `${placeholder} is a placeholder, not a value` } : { code, stderr };
}

async function parseFailure(argv: string[]): Promise<string> {
  const values = valuesOf(argv);
  const marked =
    values.map((value) => ENCLOSED.exec(value)?.[0]).find(Boolean) ??
    values.flatMap(partsOf).find((part) => MARKED.test(part));
  if (marked) return `${marked} is a placeholder, not a value`;
  home ??= mkdtempSync(join(tmpdir(), 'nodereg-hint-home-'));
  const { code, stderr } = await parseOnly(argv, {
    env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), NO_COLOR: '1', CI: '1' },
    interactive: false,
  });
  return code === 0 ? '' : stderr.trim() || `exit ${code}`;
}

/**
 * Checks that every command the hints of a run print parses with the real program. Throws (failing the
 * test that made the run) naming each hint that does not; records instead with NODEREG_HINT_RECORD.
 */
export async function checkHints(stdout: string, stderr: string): Promise<void> {
  const failures: string[] = [];
  const record = process.env.NODEREG_HINT_RECORD;
  for (const hint of hintsOf(stdout, stderr)) {
    for (const [, line] of hint.matchAll(COMMAND)) {
      const argv = shellWords(line);
      const key = JSON.stringify(argv);
      if (!outcomes.has(key)) outcomes.set(key, parseFailure(argv));
      const hazard = shellHazard(line);
      const failure = hazard ? `a shell acts on ${hazard}` : await (outcomes.get(key) as Promise<string>);
      if (record) {
        const test = expect.getState();
        appendFileSync(
          record,
          `${JSON.stringify({ argv, hint, failure, file: test.testPath, test: test.currentTestName })}\n`,
        );
      }
      if (failure) failures.push(`hint "${hint}": \`nodereg ${argv.join(' ')}\` does not run as printed: ${failure}`);
    }
  }
  if (failures.length > 0 && !record)
    throw new Error(`a printed hint does not run as printed:\n${failures.join('\n')}`);
}
