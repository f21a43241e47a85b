// Which command lines run without commander or zod (quick.ts): reads that scripts run in a loop
// (`node show ID`), which would otherwise spend most of their time loading the full program
// (bench/startup.js measures it). Only plain forms are taken. Anything else (help, an unknown flag, an
// id the contract refuses) goes to the full program, which says what is wrong. Free of imports but
// the contract's limits: bin/nodereg.js asks it first (dist/cli/quick-args.cjs), for every command.
import { isNodeId } from '../contract/limits.js';
import type { Globals } from './context.js';

/** The program's global options (program.ts defines them; a test checks these are all of them). */
export const VALUE_OPTIONS = { '--registry': 'registry', '--token': 'token', '--profile': 'profile' } as const;
export const SWITCHES = { '--json': ['json', true], '--verbose': ['verbose', true], '--no-input': ['input', false] } as const;

/** The global options and the words of `argv`, when it holds no option but those, each at most once. */
function plainArgs(argv: string[]): { globals: Globals; words: string[] } | undefined {
  const globals: Globals = { input: true };
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
    if (Object.hasOwn(VALUE_OPTIONS, name)) {
      const value = equals < 0 ? argv[++i] : arg.slice(equals + 1);
      if (value === undefined || (equals < 0 && value.startsWith('-'))) return undefined;
      globals[VALUE_OPTIONS[name as keyof typeof VALUE_OPTIONS]] = value;
    } else if (Object.hasOwn(SWITCHES, name) && equals < 0) {
      const [key, value] = SWITCHES[name as keyof typeof SWITCHES];
      Object.assign(globals, { [key]: value });
    } else {
      return undefined;
    }
  }
  return { globals, words };
}

/** A command line quick.ts runs: the global options and the node to show. */
export interface QuickCommand {
  globals: Globals;
  nodeId: string;
}

/** The command `argv` asks for, when quick.ts runs it; undefined when the full program must. */
export function quickCommand(argv: string[]): QuickCommand | undefined {
  const plain = plainArgs(argv);
  if (!plain) return undefined;
  const [group, command, nodeId, ...more] = plain.words;
  if (group !== 'node' || command !== 'show' || nodeId === undefined || more.length > 0 || !isNodeId(nodeId)) return undefined;
  return { globals: plain.globals, nodeId };
}
