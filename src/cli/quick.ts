// Runs `node show ID` as quick-args.ts takes it, without commander or zod: bin/nodereg.js loads this
// from a CommonJS bundle of its own (dist/cli/quick.cjs), which also spares Node's ES module loader.
import { showNode } from './commands/node-show.js';
import { runCommand, type RunDeps } from './context.js';
import { quickCommand } from './quick-args.js';

/** Runs `argv` when it is a command taken here and resolves to the exit code; undefined when it is not. */
export function quickRun(argv: string[], version: string, deps: RunDeps = {}): Promise<number> | undefined {
  const command = quickCommand(argv);
  if (command?.kind !== 'node-show') return undefined;
  return runCommand(command.globals, version, deps, (ctx) => showNode(ctx, command.nodeId));
}
