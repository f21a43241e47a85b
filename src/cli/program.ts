import { Command, CommanderError, Option } from 'commander';
import { DEFAULT_REGISTRY_URL, RESTART_WINDOW_MS } from '../shared/tuning.js';
import { commands, type CommandEntry } from './commands/index.js';
import { Ctx, type Globals, type RunDeps } from './context.js';
import { EXIT, exitCodesHelp } from './errors.js';
import { withoutUserInfo } from '../shared/url.js';
import { asInvoked } from './invocation.js';
import { VALUE_OPTIONS } from './quick-args.js';

/** Global options that take a value: skipped when looking for the command name in argv. */
const VALUE_OPTION_NAMES = new Set(Object.keys(VALUE_OPTIONS));

/** The command a user asked for (also through `help <command>`), found without building anything. */
export function requestedCommand(argv: string[]): CommandEntry | undefined {
  const words = commandWords(argv, 2);
  const name = words[0] === 'help' ? words[1] : words[0];
  return commands.find((c) => c.name === name);
}

/** The first `max` words of the command line that are neither options nor their values. */
function commandWords(argv: string[], max: number): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length && words.length < max; i++) {
    const arg = argv[i];
    if (arg === '--') break;
    if (VALUE_OPTION_NAMES.has(arg)) i++;
    else if (!arg.startsWith('-')) words.push(arg);
  }
  return words;
}

/**
 * An id typed where a command goes (`nodereg node my-node`, `publisher members acme`): the read that
 * shows it. Said as a condition: the word may as well be a typo of a command, which commander suggests.
 */
function readCommandFor(argv: string[]): string | undefined {
  const [group, second, third] = commandWords(argv, 3);
  const id = group === 'publisher' && second === 'members' ? third : second;
  if (!id || !/^[A-Za-z0-9][\w.-]*$/.test(id)) return undefined;
  if (group === 'node') return `if ${id} is a node's id, \`nodereg node show ${id}\` shows it`;
  if (group === 'version') return `if ${id} is a node's id, \`nodereg node versions ${id}\` lists its versions`;
  if (group === 'publisher') return `if ${id} is a publisher's id, \`nodereg publisher show ${id}\` shows it${second === 'members' ? ' and its members' : ''}`;
  return undefined;
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
function helpAsFlag(argv: string[]): string[] {
  const [first, second] = commandWords(argv, 2);
  if (first !== 'help' || second === undefined) return argv;
  const at = argv.indexOf('help');
  const known = second === 'help' || commands.some((c) => c.name === second);
  return [...argv.slice(0, at), ...argv.slice(at + 1), ...(known ? ['--help'] : [])];
}

/** Runs the CLI on `argv` (without node and script) and resolves to the exit code. Never exits. */
export async function run(typed: string[], version: string, deps: RunDeps = {}): Promise<number> {
  const argv = helpAsFlag(typed);
  const program = new Command('nodereg');
  const ctx = new Ctx(() => program.opts<Globals>(), version, deps);
  // `serve --log json`, the flag anywhere: commander's own errors (before serve's action) are JSON lines too.
  const log = logFormat(argv);
  const logJson = log.format === 'json' && requestedCommand(log.rest)?.name === 'serve';
  const writeErr = (text: string) => {
    if (!logJson) return void ctx.stderr.write(withoutUserInfo(text));
    for (const line of text.split('\n')) if (line.trim()) ctx.out.record('hint', { message: line.trim().replace(/^\((.*)\)$/, '$1') });
  };
  program
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
    .option('--verbose', 'log requests (tokens and URLs\' users and passwords redacted) and stack traces to stderr')
    .helpCommand('help [command]', 'show help for a command')
    // each command's --help lists --token, --registry… too: they go after the command as well
    .configureHelp({ showGlobalOptions: true })
    .showSuggestionAfterError(true)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr,
      outputError: (text, write) =>
        logJson ? ctx.out.record('error', { message: text.trim().replace(/^error: /, ''), code: 'invalid_input' }) : write(text),
      // the width of the streams help is written to (80 when not a terminal), so help is stable in tests
      getOutHelpWidth: () => (ctx.stdout.isTTY ? (ctx.stdout as { columns?: number }).columns : undefined) ?? 80,
      getErrHelpWidth: () => (ctx.stderr.isTTY ? (ctx.stderr as { columns?: number }).columns : undefined) ?? 80,
    })
    .addHelpText('after', TOP_HELP);

  const wanted = requestedCommand(argv);
  for (const entry of commands) {
    if (entry === wanted) {
      (await entry.load()).register(program, ctx);
    } else {
      // Listed for help and "did you mean", loaded only when run.
      program.command(entry.name).description(entry.summary).allowUnknownOption().allowExcessArguments();
    }
  }

  const jsonRequested = argv.includes('--json');
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // A group without its subcommand (`nodereg token`) is commander's help on stderr with exit code 1: invalid input.
      const groupAlone = error.code === 'commander.help' && error.exitCode !== 0;
      if (!groupAlone && (error.exitCode === 0 || error.code === 'commander.help' || error.code === 'commander.helpDisplayed' || error.code === 'commander.version')) {
        return EXIT.ok;
      }
      if (groupAlone) error.message = `${['nodereg', ...commandWords(argv, 3)].join(' ')} needs a command (its help lists them)`;
      // commander has already printed its message on stderr (with serve --log json, as the one report)
      const hint = error.code === 'commander.unknownCommand' ? readCommandFor(argv) : undefined;
      if (hint && !logJson) ctx.out.hint(hint);
      if (jsonRequested && !logJson) ctx.stdout.write(`${JSON.stringify({ error: { code: 'invalid_input', message: withoutUserInfo(error.message.replace(/^error: /, '')), ...(hint ? { hint: asInvoked(hint, ctx.out.command) } : {}) } })}\n`);
      return EXIT.invalid;
    }
    return ctx.fail(error);
  }
}
