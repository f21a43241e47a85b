// Runs the command lines quick-args.ts takes, without commander or zod: bin/nodereg.js loads this from
// a CommonJS bundle of its own (dist/cli/quick.cjs), which also spares Node's ES module loader.
import { showNode } from './commands/node-show.js';
import { Ctx, type RunDeps } from './context.js';
import { EXIT } from './errors.js';
import { quickCommand } from './quick-args.js';

/** Runs `argv` when it is a command taken here and resolves to the exit code; undefined when it is not. */
export function quickRun(argv: string[], version: string, deps: RunDeps = {}): Promise<number> | undefined {
  const command = quickCommand(argv);
  if (!command) return undefined;
  const ctx = new Ctx(() => command.globals, version, deps);
  return showNode(ctx, command.nodeId).then(
    () => EXIT.ok,
    (error: unknown) => ctx.fail(error),
  );
}
