// Runs `publish` as quick-args.ts takes it, without commander and the program: main.ts imports this
// instead of program.ts for such a line, which spares ~10 ms of the start of every publish in CI
// (measured: docs/decisions.md).
import { publishProject } from './commands/publish.js';
import { runCommand, type RunDeps } from './context.js';
import { quickCommand } from './quick-args.js';

/** program.ts's run, for a `publish` line quick-args.ts takes (main.ts asks it first). */
export function run(argv: string[], version: string, deps: RunDeps = {}): Promise<number> {
  const command = quickCommand(argv);
  if (command?.kind !== 'publish') throw new Error(`quick-publish.ts runs the publish lines quick-args.ts takes, not: ${argv.join(' ')}`);
  return runCommand(command.globals, version, deps, (ctx) => publishProject(ctx, command.dir, command.options));
}
