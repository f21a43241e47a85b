// Commands run on many nodes of one repository (`validate|pack|scan|publish dirA dirB …` or `--all`):
// each node runs the one-node command, its result kept to print one JSON array for all.
import { CliError, invalidInput, ResultExit, toCliError } from './errors.js';
import type { Ctx } from './context.js';
import { shellWord } from './invocation.js';
import type { Output } from './output.js';
import { nodeDirs } from './project-discovery.js';

/** A node's result as the one-node command made it, with the directory it is in. */
export interface NodeResult {
  dir: string;
  value: Record<string, unknown>;
}

/**
 * The context of one node of many: its result is kept in `results` (printed as words at once unless
 * --json, where one array is printed at the end), and GITHUB_OUTPUT is left to the caller, which
 * writes one line per node. Everything else is the run's own context.
 */
export function nodeCtx(ctx: Ctx, dir: string, results: NodeResult[]): Ctx {
  const out = Object.create(ctx.out) as Output;
  out.result = (value, human) => {
    results.push({ dir, value: value as Record<string, unknown> });
    if (!ctx.out.json) ctx.out.result(value, human);
  };
  const child = Object.create(ctx) as Ctx;
  Object.defineProperty(child, 'out', { value: out });
  Object.defineProperty(child, 'env', { value: { ...ctx.env, GITHUB_OUTPUT: undefined } });
  return child;
}

/** The one JSON array of a run on many nodes: each result with its directory first. */
export const resultsArray = (results: NodeResult[]) => results.map(({ dir, value }) => ({ dir, ...value }));

/**
 * A node's error, said of its directory: the message names it, and a hint's `nodereg scan|validate|pack`
 * gets the directory, so that it runs as printed from where the run was started.
 */
export function nodeError(error: unknown, dir: string, said: string): CliError {
  const e = toCliError(error);
  const hint = e.hint?.replace(
    /`nodereg (scan|validate|pack)`/g,
    (_, command) => `\`nodereg ${command} ${shellWord(dir)}\``,
  );
  const named = new CliError(`${dir}: ${e.message}${said ? `\n${said}` : ''}`, e.exitCode, e.code, hint, e.status);
  named.fields = e.fields;
  return named;
}

/**
 * Runs a check (validate, pack, scan) for each directory in order, going on after a node that fails,
 * so that one run shows every node's problems: each failure is reported as it comes, kept in the JSON
 * array as `{ dir, error }`, and the run ends with the first failure's exit code. A node whose result
 * was printed but that exits non-zero (scan's findings) does not stop the others either. (A publish of
 * many nodes is publish/many.ts: it stops, since nothing may be published after a failure.)
 */
export async function eachNode(ctx: Ctx, dirs: string[], one: (ctx: Ctx, dir: string) => Promise<void>): Promise<void> {
  const results: NodeResult[] = [];
  const failed: string[] = [];
  let exitCode = 0;
  for (const dir of dirs) {
    if (!ctx.out.json) ctx.out.info(`── ${dir}`);
    try {
      await one(nodeCtx(ctx, dir, results), dir);
    } catch (error) {
      if (error instanceof ResultExit) {
        exitCode ||= error.exitCode;
        continue;
      }
      const named = nodeError(error, dir, '');
      exitCode ||= named.exitCode;
      failed.push(dir);
      results.push({ dir, value: { error: { code: named.code, message: named.message, hint: named.hint } } });
      if (!ctx.out.json) ctx.out.error(named, false);
    }
  }
  if (ctx.out.json) ctx.out.result(resultsArray(results));
  else if (failed.length) ctx.out.info(`${failed.length} of ${dirs.length} nodes failed: ${failed.join(', ')}`);
  if (exitCode) throw new ResultExit(exitCode);
}

/**
 * A command's node, or nodes: one directory (or none) runs the one-node command as always; several, or
 * --all, run each. `oneFile` names a flag that writes one file (scan --sarif), which several nodes
 * would overwrite: refused with them.
 */
export async function onNodes(
  ctx: Ctx,
  dirs: string[],
  all: boolean | undefined,
  one: (ctx: Ctx, dir: string | undefined) => Promise<void>,
  oneFile?: string,
): Promise<void> {
  if (!all && dirs.length <= 1) return one(ctx, dirs[0]);
  if (oneFile)
    throw invalidInput(
      `${oneFile} writes one file, which each of several nodes would overwrite`,
      `give one node directory with ${oneFile}, or leave ${oneFile} out`,
    );
  return eachNode(ctx, await nodeDirs(dirs, all), one);
}
