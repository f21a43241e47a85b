// Follows the mapping dicts of a package (NODE_CLASS_MAPPINGS and its display names) through
// assignments, `.update()`, `NAME[key] = value`, merges and imports of the package's own modules, and
// the names they map to back to class definitions.
import type { Node } from 'web-tree-sitter';
import { EXTRACT_LIMITS, ExtractLimitReached, type Module, type PackageModules } from './package-modules.js';
import { namedChildren, stringValue } from './python-values.js';

/** A mapping's entries: each key with the expression it maps to and the module it is written in. */
export type Mapping = Map<string, { value: Node; module: Module }>;

export interface ClassDefinition {
  definition: Node;
  module: Module;
}

const merge = (into: Mapping, from: Mapping | undefined) => {
  for (const [key, value] of from ?? []) into.set(key, value);
};

/** The top-level statements of a module that assign, update or extend `name`. */
function writesTo(module: Module, name: string): Node[] {
  const writes: Node[] = [];
  for (const statement of module.statements) {
    const expression = statement.type === 'expression_statement' ? statement.namedChildren[0] : null;
    if (!expression) continue;
    if (expression.type === 'assignment' || expression.type === 'augmented_assignment') {
      const left = expression.childForFieldName('left');
      const target = left?.type === 'subscript' ? left.childForFieldName('value') : left;
      if (target?.text === name) writes.push(expression);
    } else if (expression.type === 'call') {
      const fn = expression.childForFieldName('function');
      if (fn?.type === 'attribute' && fn.childForFieldName('object')?.text === name) writes.push(expression);
    }
  }
  return writes;
}

export class MappingFollower {
  constructor(private readonly modules: PackageModules) {}

  /** The mapping a module-level name holds, or undefined when it is not one the extraction can read. */
  mappingNamed(module: Module, name: string, depth = 0): Mapping | undefined {
    if (depth > EXTRACT_LIMITS.depth) throw new ExtractLimitReached('the mappings are imported or merged too deeply');
    const writes = writesTo(module, name);
    if (writes.length) return this.applyWrites(module, writes, depth);
    const source = this.sourceOf(module, name);
    return source && this.mappingNamed(source.module, source.name, depth + 1);
  }

  /** The class a mapped value names: a class of its module, or one the module imports. */
  classOf(module: Module, node: Node, depth = 0): ClassDefinition | undefined {
    if (node.type === 'identifier') return this.classNamed(module, node.text, depth);
    const owner = node.type === 'attribute' ? this.submodule(module, node) : undefined;
    const attribute = node.childForFieldName('attribute')?.text;
    return owner && attribute ? this.classNamed(owner, attribute, depth + 1) : undefined;
  }

  private classNamed(module: Module, name: string, depth: number): ClassDefinition | undefined {
    if (depth > EXTRACT_LIMITS.depth) return undefined;
    const local = module.classes.get(name);
    if (local) return { definition: local, module };
    const source = this.sourceOf(module, name);
    return source && this.classNamed(source.module, source.name, depth + 1);
  }

  /** Where an imported name comes from: a named import, or the first star import that defines it. */
  private sourceOf(module: Module, name: string): { module: Module; name: string } | undefined {
    const imported = module.imports.get(name);
    if (imported && imported.name !== '*') {
      const source = this.modules.module(imported.module);
      return source && { module: source, name: imported.name };
    }
    for (const star of module.starImports) {
      const source = this.modules.module(star);
      if (source && (source.classes.has(name) || writesTo(source, name).length || source.imports.has(name))) {
        return { module: source, name };
      }
    }
    return undefined;
  }

  /** `nodes.X`: the module `nodes` names when it is an imported module of the package. */
  private submodule(module: Module, attribute: Node): Module | undefined {
    const owner = module.imports.get(attribute.childForFieldName('object')?.text ?? '');
    return owner?.name === '*' ? this.modules.module(owner.module) : undefined;
  }

  private applyWrites(module: Module, writes: Node[], depth: number): Mapping {
    let mapping: Mapping = new Map();
    for (const write of writes) {
      const left = write.childForFieldName('left');
      const right = write.childForFieldName('right');
      if (write.type === 'call') {
        const method = write.childForFieldName('function')?.childForFieldName('attribute')?.text;
        const argument = namedChildren(write.childForFieldName('arguments'))[0];
        if (method === 'update' && argument) merge(mapping, this.evaluate(module, argument, depth));
      } else if (left?.type === 'subscript' && right) {
        const key = stringValue(left.childForFieldName('subscript'));
        if (key !== undefined) mapping.set(key, { value: right, module });
      } else if (write.type === 'augmented_assignment' && right) {
        merge(mapping, this.evaluate(module, right, depth));
      } else if (right) {
        mapping = this.evaluate(module, right, depth) ?? new Map();
      }
    }
    return mapping;
  }

  /** A dict expression's entries: a literal, `{**a, **b}`, `a | b`, `dict(…)`, a name or `module.NAME`. */
  private evaluate(module: Module, node: Node, depth: number): Mapping | undefined {
    switch (node.type) {
      case 'parenthesized_expression': {
        const inner = node.namedChildren[0];
        return inner ? this.evaluate(module, inner, depth) : undefined;
      }
      case 'identifier':
        return this.mappingNamed(module, node.text, depth + 1);
      case 'attribute': {
        const owner = this.submodule(module, node);
        const attribute = node.childForFieldName('attribute')?.text;
        return owner && attribute ? this.mappingNamed(owner, attribute, depth + 1) : undefined;
      }
      case 'binary_operator':
        return node.childForFieldName('operator')?.text === '|' ? this.union(module, node, depth) : undefined;
      case 'dictionary':
        return this.dictionary(module, node, depth);
      case 'call':
        return node.childForFieldName('function')?.text === 'dict' ? this.dictCall(module, node, depth) : undefined;
      default:
        return undefined;
    }
  }

  private union(module: Module, node: Node, depth: number): Mapping {
    const mapping: Mapping = new Map();
    for (const side of ['left', 'right']) {
      const operand = node.childForFieldName(side);
      if (operand) merge(mapping, this.evaluate(module, operand, depth));
    }
    return mapping;
  }

  private dictionary(module: Module, node: Node, depth: number): Mapping {
    const mapping: Mapping = new Map();
    for (const entry of namedChildren(node)) {
      if (entry.type === 'pair') {
        const key = stringValue(entry.childForFieldName('key'));
        const value = entry.childForFieldName('value');
        if (key !== undefined && value) mapping.set(key, { value, module });
      } else if (entry.type === 'dictionary_splat') {
        const inner = entry.namedChildren[0];
        if (inner) merge(mapping, this.evaluate(module, inner, depth));
      }
    }
    return mapping;
  }

  private dictCall(module: Module, node: Node, depth: number): Mapping {
    const mapping: Mapping = new Map();
    for (const argument of namedChildren(node.childForFieldName('arguments'))) {
      if (argument.type === 'keyword_argument') {
        const key = argument.childForFieldName('name')?.text;
        const value = argument.childForFieldName('value');
        if (key && value) mapping.set(key, { value, module });
        continue;
      }
      const inner = argument.type === 'dictionary_splat' ? argument.namedChildren[0] : argument;
      if (inner) merge(mapping, this.evaluate(module, inner, depth));
    }
    return mapping;
  }
}
