// Arguments in the wrong place get our words, for every command at once: commander's own ("too many
// arguments for 'show'. Expected 1 argument but got 2.", "required option '--message <text>' not
// specified") name no fix. Each error says what the command takes, and where it can, its hint is the
// typed line put right, which runs as printed (without a --token, which a hint never repeats).
import { Command } from 'commander';
import { SEMVER_PATTERN } from '../contract/limits.js';
import { CliError, EXIT } from './errors.js';
import { shellWord } from './invocation.js';

const VERSION = new RegExp(SEMVER_PATTERN);
/** What a semver range may start with (`^1.2`, `<2.0.0`, `1.x`, `*`). */
const RANGE_START = /^(?:[\d<>=^~*]|v\d|[xX](?:$|\.))/;

/** The commander Command of the CLI: its argument errors are ours (see the top of this file). */
export class CliCommand extends Command {
  /** The line the user typed (without `nodereg`), for hints that repeat it; set on the program. */
  typed: string[] = [];
  /** False for `serve --log json`, whose every line is JSON: commander's errors are logged as such there. */
  ownErrors = true;

  override createCommand(name?: string): Command {
    return new CliCommand(name);
  }

  override error(message: string, errorOptions?: { code?: string; exitCode?: number }): never {
    const own = rootOf(this).ownErrors ? ownError(this, message, errorOptions?.code) : undefined;
    if (own) throw own;
    return super.error(message, errorOptions);
  }
}

/** `nodereg version update` */
const pathOf = (command: Command): string => {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(' ');
};

function rootOf(command: Command): CliCommand {
  let root = command;
  while (root.parent) root = root.parent;
  return root as CliCommand; // createCommand makes every command of the program a CliCommand
}

const typedOf = (command: Command): string[] => rootOf(command).typed;

/** The typed line, changed by `edit`, as a command to run; a --token is left out. */
function fixedLine(command: Command, edit: (words: string[]) => string[] | undefined): string | undefined {
  const words = edit([...typedOf(command)]);
  if (!words) return undefined;
  const kept = words.filter(
    (word, i) => word !== '--token' && words[i - 1] !== '--token' && !word.startsWith('--token='),
  );
  return `nodereg ${kept.map(shellWord).join(' ')}`;
}

const argumentsText = (command: Command) =>
  command.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`)).join(' ') || 'no argument';

const helpHint = (command: Command) => `\`${pathOf(command)} --help\` shows its arguments, options and examples`;

function ownError(command: Command, message: string, code: string | undefined): CliError | undefined {
  const invalid = (text: string, hint: string) => new CliError(text, EXIT.invalid, 'invalid_input', hint);
  if (code === 'commander.excessArguments') {
    const extra = command.args.slice(command.registeredArguments.length);
    const words = extra.map((word) => `"${word}"`).join(', ');
    return invalid(
      `${pathOf(command)} takes ${argumentsText(command)}; ${words} ${extra.length === 1 ? 'is one argument' : 'are arguments'} too many (a value with spaces goes in quotes; an option's value right after it)`,
      helpHint(command),
    );
  }
  if (code === 'commander.missingArgument') {
    const name = /'([^']+)'/.exec(message)?.[1] ?? '';
    return invalid(`${pathOf(command)} takes ${argumentsText(command)}: <${name}> is missing`, helpHint(command));
  }
  if (code === 'commander.missingMandatoryOptionValue') return missingOption(command, message, invalid);
  return undefined;
}

/** `appeal my-node 1.0.0 "it was a false positive"`: the value was typed without its option. */
function missingOption(command: Command, message: string, invalid: (text: string, hint: string) => CliError): CliError {
  const flags = /'([^']+)'/.exec(message)?.[1] ?? '';
  const option = command.options.find((o) => o.flags === flags);
  const long = option?.long ?? flags.split(/[ ,]/)[0];
  const extra = command.args.slice(command.registeredArguments.length);
  const fixed =
    extra.length === 1
      ? fixedLine(command, (words) => {
          const at = words.lastIndexOf(extra[0]);
          return at < 0 ? undefined : [...words.slice(0, at), long, extra[0], ...words.slice(at + 1)];
        })
      : undefined;
  return invalid(
    `${pathOf(command)} needs ${flags}${option?.description ? ` (${option.description})` : ''}${extra.length === 1 ? `; "${extra[0]}" is one argument too many: is it its value?` : ''}`,
    fixed ? `if it is, run \`${fixed}\`` : `give it as ${flags}; ${helpHint(command)}`,
  );
}

/**
 * Before any command's action: a command that takes <nodeId> then a version, given the version
 * first (`version update 1.2.0 my-node`), is answered with the line in the right order.
 */
export function checkArgumentOrder(command: Command): void {
  const [first, second] = command.registeredArguments.map((a) => a.name());
  if (first !== 'nodeId' || !second?.startsWith('version')) return;
  const [nodeId, version] = command.args;
  if (nodeId === undefined || version === undefined || !VERSION.test(nodeId) || RANGE_START.test(version)) return;
  const fixed = fixedLine(command, (words) => {
    const a = words.indexOf(nodeId);
    const b = words.indexOf(version, a + 1);
    if (a < 0 || b < 0) return undefined;
    [words[a], words[b]] = [words[b], words[a]];
    return words;
  });
  throw new CliError(
    `the node id goes first, then the version: "${nodeId}" is a version and "${version}" is not`,
    EXIT.invalid,
    'invalid_input',
    fixed ? `run \`${fixed}\`` : helpHint(command),
  );
}
