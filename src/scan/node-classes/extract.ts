// The node classes a package defines, read statically from its `__init__.py` and the modules it
// imports: NODE_CLASS_MAPPINGS with NODE_DISPLAY_NAME_MAPPINGS, and the schema style's
// `comfy_entrypoint` → extension → `get_node_list`. Never runs the package's code.
import type { Node } from 'web-tree-sitter';
import { emptyFields, legacyFields, type NodeClassFields, returned, schemaFields } from './class-fields.js';
import { type Mapping, MappingFollower } from './mappings.js';
import {
  EXTRACT_LIMITS,
  ExtractLimitReached,
  type Module,
  PackageModules,
  type ParsePython,
} from './package-modules.js';
import { namedChildren, sequenceItems, stringValue } from './python-values.js';

export interface NodeClass extends NodeClassFields {
  name: string;
}

export type ExtractStatus = 'success' | 'invalid_format' | 'failed';

export interface Extraction {
  status: ExtractStatus;
  /** Why the status is not `success`, in words a publisher can act on; '' on success. */
  reason: string;
  classes: NodeClass[];
}

const ENTRY = '__init__.py';

function mappedClasses(follower: MappingFollower, mapping: Mapping, displayNames: Mapping | undefined): NodeClass[] {
  const classes: NodeClass[] = [];
  for (const [name, { value, module }] of mapping) {
    const resolved = follower.classOf(module, value);
    const fields = resolved ? legacyFields(follower, resolved.module, resolved.definition) : emptyFields();
    const shown = displayNames?.get(name);
    fields.displayName = (shown && stringValue(shown.value)) ?? fields.displayName;
    classes.push({ name, ...fields });
  }
  return classes;
}

function functionNamed(module: Module, name: string): Node | undefined {
  for (const statement of module.statements) {
    const inner = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (inner?.type === 'function_definition' && inner.childForFieldName('name')?.text === name) return inner;
  }
  return undefined;
}

/** `comfy_entrypoint()` returns an extension whose `get_node_list()` returns the node classes. */
function schemaClasses(follower: MappingFollower, entry: Module): NodeClass[] | undefined {
  const made = returned(functionNamed(entry, 'comfy_entrypoint'));
  const extensionCall = made?.type === 'await' ? made.namedChildren[0] : made;
  const extensionName = extensionCall?.type === 'call' ? extensionCall.childForFieldName('function') : undefined;
  const extension = extensionName && follower.classOf(entry, extensionName);
  if (!extension) return undefined;
  const listing = namedChildren(extension.definition.childForFieldName('body'))
    .map((statement) =>
      statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement,
    )
    .find((fn) => fn?.type === 'function_definition' && fn.childForFieldName('name')?.text === 'get_node_list');
  const classes: NodeClass[] = [];
  for (const item of sequenceItems(returned(listing ?? undefined))) {
    const resolved = follower.classOf(extension.module, item);
    const schema = resolved && schemaFields(follower, resolved.module, resolved.definition);
    if (schema) classes.push({ name: schema.nodeId, ...schema.fields });
  }
  return classes;
}

function extractFrom(modules: PackageModules): Extraction {
  const entry = modules.module(ENTRY);
  if (!entry) {
    const reason = `no ${ENTRY} at the top of the archive: the host application loads a node package from it`;
    return { status: 'invalid_format', reason, classes: [] };
  }
  if (entry.errorLine !== undefined) {
    return { status: 'failed', reason: `${ENTRY} does not parse as Python (line ${entry.errorLine})`, classes: [] };
  }
  const follower = new MappingFollower(modules);
  const mapping = follower.mappingNamed(entry, 'NODE_CLASS_MAPPINGS');
  const legacy = mapping
    ? mappedClasses(follower, mapping, follower.mappingNamed(entry, 'NODE_DISPLAY_NAME_MAPPINGS'))
    : [];
  const schema = schemaClasses(follower, entry) ?? [];
  const byName = new Map([...legacy, ...schema].map((found) => [found.name, found]));
  const classes = [...byName.values()].slice(0, EXTRACT_LIMITS.classes);
  if (classes.length) return { status: 'success', reason: '', classes };
  const reason = mapping
    ? `NODE_CLASS_MAPPINGS in ${ENTRY} maps no class that can be read without running the code`
    : `${ENTRY} defines neither NODE_CLASS_MAPPINGS nor comfy_entrypoint`;
  return { status: 'invalid_format', reason, classes: [] };
}

/**
 * The classes of a package, from its files (path in the archive → text; only `.py` files are read).
 * `packageName` is the directory the package is installed as, for its absolute imports of itself.
 */
export function extractNodeClasses(
  files: ReadonlyMap<string, string>,
  parse: ParsePython,
  packageName = '',
): Extraction {
  const modules = new PackageModules(files, parse, packageName);
  try {
    return extractFrom(modules);
  } catch (error) {
    if (!(error instanceof ExtractLimitReached)) throw error;
    return { status: 'failed', reason: `not fully read: ${error.message}`, classes: [] };
  } finally {
    modules.dispose();
  }
}
