// What a node class declares, read from its definition: the classic attributes (RETURN_TYPES,
// FUNCTION, INPUT_TYPES …, inherited from the package's own base classes) or the schema style's
// `define_schema` returning `Schema(node_id=…, inputs=[…], outputs=[…])`.
import type { Node } from 'web-tree-sitter';
import type { MappingFollower } from './mappings.js';
import type { Module } from './package-modules.js';
import { boolValue, keywordArgument, namedChildren, sequenceItems, stringItems, stringValue } from './python-values.js';

export interface NodeClassInputs {
  required: Record<string, string>;
  optional: Record<string, string>;
}

export interface NodeClassFields {
  displayName: string;
  category: string;
  description: string;
  function: string;
  returnTypes: string[];
  returnNames: string[];
  outputIsList: boolean[];
  outputNode: boolean;
  deprecated: boolean;
  experimental: boolean;
  /** Input names and their type names, where they are written as literals. */
  inputs: NodeClassInputs;
}

export const emptyFields = (): NodeClassFields => ({
  displayName: '',
  category: '',
  description: '',
  function: '',
  returnTypes: [],
  returnNames: [],
  outputIsList: [],
  outputNode: false,
  deprecated: false,
  experimental: false,
  inputs: { required: {}, optional: {} },
});

const BASE_CLASS_DEPTH = 4;

/** A class body's assignments and methods by name, its base classes' first (so the class's own win). */
function members(follower: MappingFollower, module: Module, definition: Node, depth = 0): Map<string, Node> {
  const found = new Map<string, Node>();
  if (depth < BASE_CLASS_DEPTH) {
    for (const base of namedChildren(definition.childForFieldName('superclasses'))) {
      const resolved = follower.classOf(module, base);
      if (resolved)
        for (const [name, node] of members(follower, resolved.module, resolved.definition, depth + 1))
          found.set(name, node);
    }
  }
  for (const statement of namedChildren(definition.childForFieldName('body'))) {
    const inner = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (inner?.type === 'function_definition') {
      const name = inner.childForFieldName('name')?.text;
      if (name) found.set(name, inner);
    } else if (statement.type === 'expression_statement') {
      const assignment = statement.namedChildren[0];
      const left = assignment?.type === 'assignment' ? assignment.childForFieldName('left') : null;
      const right = assignment?.childForFieldName('right');
      if (left?.type === 'identifier' && right) found.set(left.text, right);
    }
  }
  return found;
}

/** The value of the first `return` directly in a function's body. */
export function returned(fn: Node | undefined): Node | undefined {
  for (const statement of namedChildren(fn?.childForFieldName('body'))) {
    if (statement.type === 'return_statement') return statement.namedChildren[0] ?? undefined;
  }
  return undefined;
}

/** `{"required": {"image": ("IMAGE",), "mode": (["a", "b"],)}}`: each input's name and type name. */
function legacyInputs(inputTypes: Node | undefined): NodeClassInputs {
  const inputs: NodeClassInputs = { required: {}, optional: {} };
  const spec = returned(inputTypes);
  if (spec?.type !== 'dictionary') return inputs;
  for (const group of namedChildren(spec)) {
    const kind = stringValue(group.childForFieldName('key'));
    const entries = group.childForFieldName('value');
    if ((kind !== 'required' && kind !== 'optional') || entries?.type !== 'dictionary') continue;
    for (const entry of namedChildren(entries)) {
      const name = stringValue(entry.childForFieldName('key'));
      if (name === undefined) continue;
      const [first] = sequenceItems(entry.childForFieldName('value'));
      inputs[kind][name] = first?.type === 'list' ? 'COMBO' : (stringValue(first) ?? '');
    }
  }
  return inputs;
}

export function legacyFields(follower: MappingFollower, module: Module, definition: Node): NodeClassFields {
  const found = members(follower, module, definition);
  const fields = emptyFields();
  fields.category = stringValue(found.get('CATEGORY')) ?? '';
  fields.description = stringValue(found.get('DESCRIPTION')) ?? '';
  fields.function = stringValue(found.get('FUNCTION')) ?? '';
  fields.returnTypes = stringItems(found.get('RETURN_TYPES'));
  fields.returnNames = stringItems(found.get('RETURN_NAMES'));
  fields.outputIsList = sequenceItems(found.get('OUTPUT_IS_LIST'))
    .map((item) => boolValue(item))
    .filter((item): item is boolean => item !== undefined);
  fields.outputNode = boolValue(found.get('OUTPUT_NODE')) ?? false;
  fields.deprecated = boolValue(found.get('DEPRECATED')) ?? false;
  fields.experimental = boolValue(found.get('EXPERIMENTAL')) ?? false;
  fields.inputs = legacyInputs(found.get('INPUT_TYPES'));
  return fields;
}

/** `io.ClipVision` → `CLIP_VISION`; `io.Custom("MY_TYPE")` → `MY_TYPE`. */
function schemaTypeName(call: Node): { type: string; args: Node[] } {
  const fn = call.childForFieldName('function');
  const args = namedChildren(call.childForFieldName('arguments'));
  const owner = fn?.type === 'attribute' ? fn.childForFieldName('object') : null;
  if (owner?.type === 'call') {
    return { type: stringValue(namedChildren(owner.childForFieldName('arguments'))[0]) ?? '', args };
  }
  const name = owner?.type === 'attribute' ? owner.childForFieldName('attribute')?.text : owner?.text;
  return { type: (name ?? '').replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase(), args };
}

function schemaInputs(list: Node | undefined): NodeClassInputs {
  const inputs: NodeClassInputs = { required: {}, optional: {} };
  for (const item of sequenceItems(list)) {
    if (item.type !== 'call') continue;
    const { type, args } = schemaTypeName(item);
    const name =
      stringValue(args.find((arg) => arg.type !== 'keyword_argument')) ?? stringValue(keywordArgument(item, 'id'));
    if (name === undefined) continue;
    inputs[boolValue(keywordArgument(item, 'optional')) ? 'optional' : 'required'][name] = type;
  }
  return inputs;
}

/** The schema of a class whose `define_schema` returns `Schema(node_id=…)`, with its node id. */
export function schemaFields(
  follower: MappingFollower,
  module: Module,
  definition: Node,
): { nodeId: string; fields: NodeClassFields } | undefined {
  const schema = returned(members(follower, module, definition).get('define_schema'));
  if (schema?.type !== 'call' || !/Schema$/.test(schema.childForFieldName('function')?.text ?? '')) return undefined;
  const nodeId = stringValue(keywordArgument(schema, 'node_id'));
  if (!nodeId) return undefined;
  const fields = emptyFields();
  fields.displayName = stringValue(keywordArgument(schema, 'display_name')) ?? '';
  fields.category = stringValue(keywordArgument(schema, 'category')) ?? '';
  fields.description = stringValue(keywordArgument(schema, 'description')) ?? '';
  fields.function = 'execute';
  fields.inputs = schemaInputs(keywordArgument(schema, 'inputs'));
  for (const output of sequenceItems(keywordArgument(schema, 'outputs'))) {
    if (output.type !== 'call') continue;
    fields.returnTypes.push(schemaTypeName(output).type);
    fields.returnNames.push(stringValue(keywordArgument(output, 'display_name')) ?? '');
    fields.outputIsList.push(boolValue(keywordArgument(output, 'is_output_list')) ?? false);
  }
  fields.outputNode = boolValue(keywordArgument(schema, 'is_output_node')) ?? false;
  fields.deprecated = boolValue(keywordArgument(schema, 'is_deprecated')) ?? false;
  fields.experimental = boolValue(keywordArgument(schema, 'is_experimental')) ?? false;
  return { nodeId, fields };
}
