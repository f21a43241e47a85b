import type { Ctx } from '../../context.js';
import { makeAsker } from './ask.js';
import { checkFlags } from './check.js';
import { decideEntries } from './decide.js';
import type { Options } from './entry.js';
import { comfyReader, readPyproject } from './read.js';
import { newEntries, writeAndReport } from './write.js';

/**
 * Creates pyproject.toml in `dir`, or adds to the one there without changing what it has. `given`
 * is the directory as the user typed it, for the hints.
 */
export async function init(ctx: Ctx, dir: string, options: Options, given?: string): Promise<void> {
  const pyproject = readPyproject(dir);
  checkFlags(options);
  const asker = await makeAsker(ctx);
  const { adopted, fromComfy } = comfyReader(pyproject.comfy);
  const entries = await decideEntries({ dir, options, pyproject, asker, fromComfy });
  const added = newEntries(pyproject, entries);
  writeAndReport(ctx, dir, pyproject, added, adopted, given);
}
