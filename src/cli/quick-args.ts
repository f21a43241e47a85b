// Which command lines run without the full program: `node show ID`, which scripts run in a loop, from
// a CommonJS bundle without commander or zod (quick.ts); `publish`, which CI runs on every release,
// without commander and the program (quick-publish.ts). bench/startup.js and bench/publish.js measure
// them. Only plain forms are taken. Anything else (help, an unknown flag, an id the contract refuses, a
// --fail-on it does not know) goes to the full program, which says what is wrong. Free of imports but
// the contract's limits: bin/nodereg.js asks it first (dist/cli/quick-args.cjs), for every command.
import { isNodeId, SCAN_SEVERITIES } from '../contract/limits.js';
import { DEFAULT_SCAN_FAIL_ON } from '../shared/scan.js';
import type { PublishOptions } from './commands/publish.js';
import type { Globals } from './context.js';

/** The program's global options (program.ts defines them; a test checks these are all of them). */
export const VALUE_OPTIONS = { '--registry': 'registry', '--token': 'token', '--profile': 'profile', '--retry-window': 'retryWindow' } as const;
export const SWITCHES = { '--json': ['json', true], '--verbose': ['verbose', true], '--no-input': ['input', false] } as const;

/**
 * The options of `publish` (commands/publish.ts defines them; a test checks these are all of them,
 * each with the key commander gives it and whether it takes a value).
 */
export const PUBLISH_OPTIONS = {
  '--dry-run': ['dryRun', false],
  '--skip-existing': ['skipExisting', false],
  '--changelog': ['changelog', true],
  '--changelog-file': ['changelogFile', true],
  '--publisher': ['publisher', true],
  '--create-publisher': ['createPublisher', false],
  '--max-size': ['maxSize', true],
  '--fail-on': ['failOn', true],
  '--accept-findings': ['acceptFindings', false],
} as const;

type OptionTable = Record<string, readonly [string, boolean]>;

/**
 * The global options, the words, and the options of the command (from `commandOptions`, after the
 * word `command`) in `argv`, when it holds no other option and each at most once.
 */
function plainArgs(argv: string[], command?: { word: string; options: OptionTable }) {
  const globals: Globals = { input: true };
  const options: Record<string, string | boolean> = {};
  const words: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('-')) {
      words.push(arg);
      continue;
    }
    const equals = arg.indexOf('=');
    const name = equals < 0 ? arg : arg.slice(0, equals);
    if (seen.has(name)) return undefined;
    seen.add(name);
    const own = command && words[0] === command.word && Object.hasOwn(command.options, name) ? command.options[name] : undefined;
    const takesValue = own ? own[1] : Object.hasOwn(VALUE_OPTIONS, name);
    if (takesValue) {
      const value = equals < 0 ? argv[++i] : arg.slice(equals + 1);
      if (value === undefined || (equals < 0 && value.startsWith('-'))) return undefined;
      if (own) options[own[0]] = value;
      else globals[VALUE_OPTIONS[name as keyof typeof VALUE_OPTIONS]] = value;
    } else if (equals >= 0) {
      return undefined;
    } else if (own) {
      options[own[0]] = true;
    } else if (Object.hasOwn(SWITCHES, name)) {
      const [key, value] = SWITCHES[name as keyof typeof SWITCHES];
      Object.assign(globals, { [key]: value });
    } else {
      return undefined;
    }
  }
  return { globals, words, options };
}

/** A command line run without the full program: the global options and what the command needs. */
export type QuickCommand =
  | { kind: 'node-show'; globals: Globals; nodeId: string }
  | { kind: 'publish'; globals: Globals; dir?: string; options: PublishOptions };

/** The command `argv` asks for, when it runs without the full program; undefined when the full program must. */
export function quickCommand(argv: string[]): QuickCommand | undefined {
  const plain = plainArgs(argv, { word: 'publish', options: PUBLISH_OPTIONS });
  if (!plain) return undefined;
  const { globals, words, options } = plain;
  if (words[0] === 'publish') {
    const [, dir, ...more] = words;
    const failOn = (options.failOn ?? DEFAULT_SCAN_FAIL_ON) as string;
    if (more.length > 0 || !(SCAN_SEVERITIES as readonly string[]).includes(failOn)) return undefined;
    return { kind: 'publish', globals, dir, options: { ...options, failOn } as PublishOptions };
  }
  const [group, command, nodeId, ...more] = words;
  if (Object.keys(options).length || group !== 'node' || command !== 'show' || nodeId === undefined || more.length > 0 || !isNodeId(nodeId)) return undefined;
  return { kind: 'node-show', globals, nodeId };
}
