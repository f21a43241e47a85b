// The entry of dist/cli/quick.cjs, a CommonJS bundle of its own: bin/nodereg.js requires it for the
// command lines quick-args.ts takes, which then load neither Node's ES module loader, commander nor zod.
import { exitAfter } from './exit.js';
import { invocation } from './invocation.js';
import { quickRun } from './quick.js';

/** Runs `argv` and exits, when quick-args.ts takes it; false (nothing done) when it does not. */
export function runQuick(argv: string[], version: string): boolean {
  const running = quickRun(argv, version, { invocation: invocation() });
  if (!running) return false;
  void exitAfter(running);
  return true;
}
