// Runs `publish` as quick-args.ts takes it, without commander and the program, from a CommonJS bundle
// of its own (dist/cli/quick-publish.cjs), which bin/nodereg.js requires for such a line: no ES module
// loader and no chunk files to resolve. Together they spare ~30 ms of every publish in CI (measured:
// docs/decisions.md).
import { publishProject } from './commands/publish.js';
import { runCommand, type RunDeps } from './context.js';
import { exitAfter } from './exit.js';
import { invocation } from './invocation.js';
import { quickCommand } from './quick-args.js';

/** program.ts's run, for a `publish` line quick-args.ts takes (bin/nodereg.js asks it first). */
export function run(argv: string[], version: string, deps: RunDeps = {}): Promise<number> {
  const command = quickCommand(argv);
  if (command?.kind !== 'publish') throw new Error(`quick-publish.ts runs the publish lines quick-args.ts takes, not: ${argv.join(' ')}`);
  return runCommand(command.globals, version, deps, (ctx) => publishProject(ctx, command.dir, command.options));
}

/** The entry of dist/cli/quick-publish.cjs: runs `argv` and exits. */
export function runQuickPublish(argv: string[], version: string): void {
  void exitAfter(run(argv, version, { invocation: invocation() }));
}
