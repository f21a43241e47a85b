// The node classes a workflow uses, from either file format the host application writes: the UI
// format (`{nodes: [{type, properties}], definitions: {subgraphs}}`) and the API format
// (`{"3": {class_type, inputs}}`). Used by `workflow deps` to find the packs to install.

/** Nodes the frontend draws that never reach the server, so no pack defines them. */
const FRONTEND_ONLY = new Set(['Note', 'MarkdownNote', 'Reroute', 'PrimitiveNode']);

/** The core pack's id in a UI-format node's `properties.cnr_id`. */
const CORE_PACK = 'comfy-core';

export interface WorkflowNodeTypes {
  format: 'ui' | 'api';
  /** Every class the workflow uses, sorted. */
  classes: string[];
  /** Classes the workflow itself says are core (UI format: `properties.cnr_id` is the core pack's). */
  markedCore: string[];
  /** Packs a UI-format node names in `properties.cnr_id` (not the core one), by class. */
  markedPacks: Record<string, string>;
}

export class WorkflowFormatError extends Error {}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface Collected {
  classes: Set<string>;
  core: Set<string>;
  packs: Map<string, string>;
}

function collectUiNodes(nodes: unknown, subgraphIds: Set<string>, into: Collected): void {
  if (!Array.isArray(nodes)) return;
  for (const node of nodes) {
    if (!isObject(node) || typeof node.type !== 'string') continue;
    // a node whose type is a subgraph's id stands for that subgraph, whose own nodes are listed below
    if (subgraphIds.has(node.type) || FRONTEND_ONLY.has(node.type)) continue;
    into.classes.add(node.type);
    const pack = isObject(node.properties) ? node.properties.cnr_id : undefined;
    if (pack === CORE_PACK) into.core.add(node.type);
    else if (typeof pack === 'string' && pack) into.packs.set(node.type, pack);
  }
}

function readUi(workflow: Json, into: Collected): void {
  const subgraphs =
    isObject(workflow.definitions) && Array.isArray(workflow.definitions.subgraphs)
      ? workflow.definitions.subgraphs
      : [];
  const subgraphIds = new Set(subgraphs.filter(isObject).map((subgraph) => String(subgraph.id)));
  collectUiNodes(workflow.nodes, subgraphIds, into);
  for (const subgraph of subgraphs) if (isObject(subgraph)) collectUiNodes(subgraph.nodes, subgraphIds, into);
}

function readApi(workflow: Json, into: Collected): void {
  for (const [id, node] of Object.entries(workflow)) {
    if (!isObject(node) || typeof node.class_type !== 'string') {
      throw new WorkflowFormatError(`node "${id}" has no class_type: not an API-format workflow`);
    }
    into.classes.add(node.class_type);
  }
}

/** The classes of a parsed workflow file; throws WorkflowFormatError naming what is wrong. */
export function workflowNodeTypes(workflow: unknown): WorkflowNodeTypes {
  if (!isObject(workflow)) throw new WorkflowFormatError('a workflow is a JSON object');
  const collected: Collected = { classes: new Set(), core: new Set(), packs: new Map() };
  const format = Array.isArray(workflow.nodes) ? 'ui' : 'api';
  if (format === 'ui') readUi(workflow, collected);
  else readApi(workflow, collected);
  if (!collected.classes.size && format === 'api' && !Object.keys(workflow).length) {
    throw new WorkflowFormatError('the workflow has no nodes');
  }
  return {
    format,
    classes: [...collected.classes].sort(),
    markedCore: [...collected.core].sort(),
    markedPacks: Object.fromEntries([...collected.packs].sort(([a], [b]) => a.localeCompare(b))),
  };
}
