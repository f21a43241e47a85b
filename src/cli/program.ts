import { Command, CommanderError, Help, Option, type OutputConfiguration } from 'commander';
import { DEFAULT_REGISTRY_URL, RESTART_WINDOW_MS } from '../shared/tuning.js';
import { commands, type CommandEntry } from './commands/index.js';
import type { Ctx, Globals, RunDeps } from './context.js';
import { EXIT, exitCodesHelp } from './exit-codes.js';
import { withoutUrlSecrets } from '../shared/url.js';
import { shellWord } from './invocation.js';
import { CliCommand, checkArgumentOrder } from './argument-words.js';
import { CliError } from './errors.js';
import { chooseStreams, type Streams } from './streams.js';

/** The names of the options of `program` that take a value: skipped when looking for the command name in argv. */
const valueOptions = (program: Command) =>
  new Set(program.options.filter((o) => o.required || o.optional).map((o) => o.long));

/** The command a user asked for (also through `help <command>`), found without loading any. */
function requestedCommand(argv: string[], valueNames: Set<string | undefined>): CommandEntry | undefined {
  const words = commandWords(argv, 2, valueNames);
  const name = words[0] === 'help' ? words[1] : words[0];
  return commands.find((c) => c.name === name);
}

/** The first `max` words of the command line that are neither options nor their values. */
function commandWords(argv: string[], max: number, valueNames: Set<string | undefined>): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length && words.length < max; i++) {
    const arg = argv[i];
    if (arg === '--') break;
    if (valueNames.has(arg)) i++;
    else if (!arg.startsWith('-')) words.push(arg);
  }
  return words;
}

/**
 * An id typed where a command goes (`nodereg node my-node`, `publisher members acme`): the read that
 * shows it. Said as a condition: the word may as well be a typo of a command, which commander suggests.
 */
function readCommandFor(argv: string[], valueNames: Set<string | undefined>): string | undefined {
  const [group, second, third] = commandWords(argv, 3, valueNames);
  const id = group === 'publisher' && second === 'members' ? third : second;
  if (!id || !/^[A-Za-z0-9][\w.-]*$/.test(id)) return undefined;
  if (group === 'node') return `if ${id} is a node's id, \`nodereg node show ${id}\` shows it`;
  if (group === 'version') return `if ${id} is a node's id, \`nodereg node versions ${id}\` lists its versions`;
  if (group === 'publisher')
    return `if ${id} is a publisher's id, \`nodereg publisher show ${id}\` shows it${second === 'members' ? ' and its members' : ''}`;
  return undefined;
}

/** Reads of the `node` group that people type without it, as other registries' CLIs take them. */
const NODE_READS = new Set(['search', 'show', 'versions', 'download']);

/**
 * `nodereg search flux` is `nodereg node search flux`: the line as typed with `node` put in (a
 * --token left out: it is never echoed), so the hint runs as printed. Undefined for other words.
 */
function nodeReadFor(argv: string[], valueNames: Set<string | undefined>): string | undefined {
  const [word] = commandWords(argv, 1, valueNames);
  if (!word || !NODE_READS.has(word) || commands.some((c) => c.name === word)) return undefined;
  const at = argv.indexOf(word);
  const words = [...argv.slice(0, at), 'node', ...argv.slice(at)].filter(
    (arg, i, all) => arg !== '--token' && all[i - 1] !== '--token' && !arg.startsWith('--token='),
  );
  return `nodereg ${words.map(shellWord).join(' ')}`;
}

const TOP_HELP = `
Environment:
  NODEREG_REGISTRY      registry URL (default: the profile's, else ${DEFAULT_REGISTRY_URL})
  NODEREG_TOKEN         auth token (user token or publisher access token)
  NODEREG_PROFILE       config profile (default: "default")
  NODEREG_RETRY_WINDOW  how long to wait for a registry that restarts (default: ${RESTART_WINDOW_MS / 1000}s)
  NO_COLOR, FORCE_COLOR, CI

${exitCodesHelp()}
  (nodereg publish, scan and restore --help say what each means for them)

Examples:
  $ nodereg serve                      run a local registry on ${DEFAULT_REGISTRY_URL}
  $ nodereg validate                   check ./pyproject.toml, the file set and the registry's limits
  $ nodereg publish --dry-run          show what would be published, send nothing
  $ NODEREG_TOKEN=... nodereg publish --skip-existing
`;

/** The last `--log X` or `--log=X` (serve's), and argv without them. */
function logFormat(argv: string[]): { format?: string; rest: string[] } {
  let format: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--log') format = argv[++i];
    else if (argv[i].startsWith('--log=')) format = argv[i].slice('--log='.length);
    else rest.push(argv[i]);
  }
  return { format, rest };
}

/**
 * `help A B` as `A B --help`: commander's help command takes one word, so `help node show` showed
 * the help of `node`; and `help nosuch` as `nosuch`, whose "unknown command" (with a suggestion) is
 * exit 2: it was the top help, exit 0.
 */
function helpAsFlag(argv: string[], valueNames: Set<string | undefined>): string[] {
  const [first, second] = commandWords(argv, 2, valueNames);
  if (first !== 'help' || second === undefined) return argv;
  const at = argv.indexOf('help');
  const known = second === 'help' || commands.some((c) => c.name === second);
  return [...argv.slice(0, at), ...argv.slice(at + 1), ...(known ? ['--help'] : [])];
}

/**
 * commander's help with a group's commands before the global options: `nodereg token --help` is read
 * for its subcommands, which came after twelve global options.
 */
function commandsFirst(cmd: Command, helper: Help): string {
  const text = Help.prototype.formatHelp.call(helper, cmd, helper);
  const globals = text.indexOf('\nGlobal Options:\n');
  const commandsAt = text.indexOf('\nCommands:\n');
  if (globals < 0 || commandsAt < globals) return text;
  const end = text.slice(commandsAt + 1).search(/\n\n\S/);
  const commandsEnd = end < 0 ? text.length : commandsAt + 1 + end + 1;
  const before = text.slice(0, globals);
  const globalBlock = text.slice(globals, commandsAt);
  const commandBlock = text.slice(commandsAt, commandsEnd);
  return `${before}${commandBlock}${globalBlock}${text.slice(commandsEnd)}`;
}

/** The program with its global options and help; commands are added by `run`. */
function createProgram(version: string): CliCommand {
  return (
    new CliCommand('nodereg')
      .description('publish nodes to a node registry, and run one locally')
      .version(version, '-V, --version', 'print the version')
      .option('--registry <url>', 'registry URL (env NODEREG_REGISTRY)')
      .addOption(new Option('--token <token>', 'auth token (env NODEREG_TOKEN)'))
      .option('--profile <name>', 'config profile (env NODEREG_PROFILE)')
      .option(
        '--retry-window <duration>',
        `how long to wait for a registry that is restarting or refusing connections, e.g. 5m; 0 fails at once (env NODEREG_RETRY_WINDOW, default ${RESTART_WINDOW_MS / 1000}s)`,
      )
      .option('--json', 'print exactly one JSON document on stdout')
      .option('--no-input', 'never prompt; fail and name the missing flag instead')
      .option('--verbose', "log requests (tokens and URLs' users and passwords redacted) and stack traces to stderr")
      .helpCommand('help [command]', 'show help for a command')
      // each command's --help lists --token, --registry… too: they go after the command as well
      .configureHelp({ showGlobalOptions: true, formatHelp: commandsFirst })
      .showSuggestionAfterError(true)
      .showHelpAfterError('(run with --help for usage)')
      .exitOverride()
      .hook('preAction', (_program, command) => checkArgumentOrder(command))
      .addHelpText('after', TOP_HELP)
  );
}

const helpWidth = (stream: { isTTY?: boolean; columns?: number }) => (stream.isTTY ? stream.columns : undefined) ?? 80;

/**
 * Where commander writes help and its errors: the run's streams; with `serve --log json` (`ctx` is
 * then serve's), JSON lines.
 */
function outputTo(streams: Streams, ctx: Ctx | undefined, logJson: boolean): OutputConfiguration {
  // read when written to: `--version` makes no stderr stream (streams.ts)
  const stdout = () => streams.stdout;
  const stderr = () => streams.stderr;
  return {
    writeOut: (text) => stdout().write(text),
    writeErr: (text) => {
      if (!logJson || !ctx) return void stderr().write(withoutUrlSecrets(text));
      for (const line of text.split('\n'))
        if (line.trim()) ctx.out.record('hint', { message: line.trim().replace(/^\((.*)\)$/, '$1') });
    },
    outputError: (text, write) =>
      logJson && ctx
        ? ctx.out.record('error', { message: text.trim().replace(/^error: /, ''), code: 'invalid_input' })
        : write(text),
    // the width of the streams help is written to (80 when not a terminal), so help is stable in tests
    getOutHelpWidth: () => helpWidth(stdout()),
    getErrHelpWidth: () => helpWidth(stderr()),
  };
}

/** The exit code of a commander error (it has printed its message), with the hint and JSON report it lacks. */
async function commanderExit(
  error: CommanderError,
  context: () => Promise<Ctx>,
  argv: string[],
  valueNames: Set<string | undefined>,
  logJson: boolean,
): Promise<number> {
  // A group without its subcommand (`nodereg token`) is commander's help on stderr with exit code 1: invalid input.
  const groupAlone = error.code === 'commander.help' && error.exitCode !== 0;
  if (
    !groupAlone &&
    (error.exitCode === 0 ||
      error.code === 'commander.help' ||
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version')
  ) {
    return EXIT.ok;
  }
  const ctx = await context();
  if (groupAlone)
    error.message = `${['nodereg', ...commandWords(argv, 3, valueNames)].join(' ')} needs a command (its help lists them)`;
  // commander has already printed its message on stderr (with serve --log json, as the one report)
  const hint = error.code === 'commander.unknownCommand' ? readCommandFor(argv, valueNames) : undefined;
  if (hint && !logJson) ctx.out.hint(hint);
  if (argv.includes('--json') && !logJson) {
    const message = withoutUrlSecrets(error.message.replace(/^error: /, ''));
    ctx.stdout.write(
      `${JSON.stringify({ error: { code: 'invalid_input', message, ...(hint ? { hint: ctx.out.invoked(hint) } : {}) } })}\n`,
    );
  }
  return EXIT.invalid;
}

/** A run made ready: the program with its commands, and what parses `argv` with it and gives the exit code. */
export interface PreparedRun {
  /** commander's program; a test may add hooks to it through commander's API before `run`. */
  program: Command;
  /** Parses the line and runs its command; resolves to the exit code. Never exits. */
  run(): Promise<number>;
}

/** The program for `typed` (without node and script), its command loaded, and how to run it. */
export async function prepareRun(typed: string[], version: string, deps: RunDeps = {}): Promise<PreparedRun> {
  const program = createProgram(version);
  // Made when a command runs or an error is reported: `--version` and `--help` load no context.
  let made: Ctx | undefined;
  const streams = chooseStreams(deps);
  const context = async () =>
    (made ??= new (await import('./context.js')).Ctx(() => program.opts<Globals>(), version, deps, streams));
  const valueNames = valueOptions(program);
  const argv = helpAsFlag(typed, valueNames);
  program.typed = argv;
  // `serve --log json`, the flag anywhere: commander's own errors (before serve's action) are JSON lines too.
  const log = logFormat(argv);
  const logJson = log.format === 'json' && requestedCommand(log.rest, valueNames)?.name === 'serve';
  const wanted = requestedCommand(argv, valueNames);
  program.ownErrors = !logJson;
  const nodeRead = wanted ? undefined : nodeReadFor(argv, valueNames);
  if (nodeRead) {
    const word = commandWords(argv, 1, valueNames)[0];
    const error = new CliError(
      `unknown command '${word}': it is a node command`,
      EXIT.invalid,
      'invalid_input',
      `run \`${nodeRead}\``,
    );
    return { program, run: async () => (await context()).fail(error) };
  }
  program.configureOutput(outputTo(streams, wanted || logJson ? await context() : undefined, logJson));
  for (const entry of commands) {
    if (entry === wanted) {
      (await entry.load()).register(program, await context(), commands);
    } else {
      // Listed for help and "did you mean", loaded only when run.
      program.command(entry.name).description(entry.summary).allowUnknownOption().allowExcessArguments();
    }
  }
  const parse = async () => {
    try {
      await program.parseAsync(argv, { from: 'user' });
      return EXIT.ok;
    } catch (error) {
      return error instanceof CommanderError
        ? commanderExit(error, context, argv, valueNames, logJson)
        : (await context()).fail(error);
    }
  };
  return { program, run: parse };
}

/** Runs the CLI on `argv` (without node and script) and resolves to the exit code. Never exits. */
export async function run(typed: string[], version: string, deps: RunDeps = {}): Promise<number> {
  return (await prepareRun(typed, version, deps)).run();
}
