// What a workflow needs installed: each node class it uses resolved to the pack that defines it (the
// registry's node-class lookup), to core, or to nothing known.
import { CORE_CLASSES } from './core-classes.js';
import type { WorkflowNodeTypes } from './node-types.js';

export interface WorkflowDeps {
  format: WorkflowNodeTypes['format'];
  /** The packs to install, each with the classes of the workflow it defines, by pack id. */
  packs: { id: string; classes: string[] }[];
  /** Classes no pack in the registry defines (and not core). */
  unknown: string[];
  /** Classes the host application ships. */
  core: string[];
}

/** `lookup` names the pack whose newest Active version defines a class, or undefined. */
export async function resolveDeps(
  types: WorkflowNodeTypes,
  lookup: (className: string) => Promise<string | undefined>,
): Promise<WorkflowDeps> {
  const marked = new Set(types.markedCore);
  const packs = new Map<string, string[]>();
  const unknown: string[] = [];
  const core: string[] = [];
  for (const name of types.classes) {
    if (marked.has(name) || CORE_CLASSES.has(name)) {
      core.push(name);
      continue;
    }
    // the registry's answer first; a pack the workflow itself names when the registry knows none
    const pack = (await lookup(name)) ?? types.markedPacks[name];
    if (pack) packs.set(pack, [...(packs.get(pack) ?? []), name]);
    else unknown.push(name);
  }
  const ids = [...packs.keys()].sort();
  return { format: types.format, packs: ids.map((id) => ({ id, classes: packs.get(id)! })), unknown, core };
}

/** The human view: the install line first, as it runs. */
export function depsText(deps: WorkflowDeps): string {
  const lines: string[] = [];
  if (deps.packs.length) {
    lines.push(`packs to install (${deps.packs.length}):`);
    for (const pack of deps.packs) lines.push(`  ${pack.id}: ${pack.classes.join(', ')}`);
  } else lines.push('no pack to install');
  if (deps.unknown.length)
    lines.push(`classes no pack in the registry defines (${deps.unknown.length}): ${deps.unknown.join(', ')}`);
  if (deps.core.length) lines.push(`core classes (${deps.core.length}): ${deps.core.join(', ')}`);
  return lines.join('\n');
}
