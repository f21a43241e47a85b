// The package's own Python modules as the extraction follows them: parsed on demand, with each
// module's top-level classes and imports of other modules of the same package.
import type { Node, Tree } from 'web-tree-sitter';
import { namedChildren } from './python-values.js';

/** Bounds that keep the extraction linear in the package whatever it holds. */
export const EXTRACT_LIMITS = { modules: 200, classes: 5_000, depth: 12 } as const;

export type ParsePython = (text: string) => Tree | null;

export class ExtractLimitReached extends Error {}

/** A name a module imports from another module of the package; `*` names the module itself. */
export interface ImportedName {
  module: string;
  name: string;
}

export interface Module {
  path: string;
  /** Top-level statements in order. */
  statements: Node[];
  classes: Map<string, Node>;
  imports: Map<string, ImportedName>;
  starImports: string[];
  /** The first line (1-based) the parser could not read, when the file does not parse. */
  errorLine?: number;
}

/** The path in the package of the module an import names, when it is one of the package's own. */
export function importedModule(
  from: string,
  spec: string,
  paths: Set<string>,
  packageName: string,
): string | undefined {
  const dots = /^\.*/.exec(spec)?.[0].length ?? 0;
  let rest = spec.slice(dots);
  let base = from.split('/').slice(0, -1);
  if (dots === 0) {
    // `from mypack.nodes import X` inside mypack names its own module absolutely
    const [head, ...tail] = rest.split('.');
    if (head !== packageName) return undefined;
    base = [];
    rest = tail.join('.');
  } else {
    base = base.slice(0, base.length - (dots - 1));
  }
  const joined = [...base, ...(rest ? rest.split('.') : [])].join('/');
  const candidates = [`${joined}.py`, `${joined ? `${joined}/` : ''}__init__.py`];
  return candidates.find((candidate) => paths.has(candidate));
}

function readFromImport(statement: Node, module: Module, resolve: (spec: string) => string | undefined): void {
  const spec = statement.childForFieldName('module_name')?.text ?? '';
  const target = resolve(spec);
  if (!target) return;
  if (namedChildren(statement).some((child) => child.type === 'wildcard_import')) {
    module.starImports.push(target);
    return;
  }
  for (const child of statement.childrenForFieldName('name')) {
    if (!child) continue;
    const aliased = child.type === 'aliased_import';
    const name = aliased ? child.childForFieldName('name')?.text : child.text;
    const local = aliased ? child.childForFieldName('alias')?.text : child.text;
    if (!name || !local) continue;
    // `from . import nodes` names a submodule when the package has one
    const submodule = resolve(spec.endsWith('.') ? `${spec}${name}` : `${spec}.${name}`);
    module.imports.set(local, submodule ? { module: submodule, name: '*' } : { module: target, name });
  }
}

function firstErrorLine(node: Node): number {
  for (const child of namedChildren(node)) {
    if (child.type === 'ERROR' || child.isMissing) return child.startPosition.row + 1;
    if (child.hasError) return firstErrorLine(child);
  }
  return node.startPosition.row + 1;
}

function readModule(path: string, tree: Tree, resolve: (spec: string) => string | undefined): Module {
  const module: Module = { path, statements: [], classes: new Map(), imports: new Map(), starImports: [] };
  if (tree.rootNode.hasError) module.errorLine = firstErrorLine(tree.rootNode);
  for (const statement of namedChildren(tree.rootNode)) {
    module.statements.push(statement);
    const definition =
      statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (definition?.type === 'class_definition') {
      const name = definition.childForFieldName('name')?.text;
      if (name) module.classes.set(name, definition);
    } else if (statement.type === 'import_from_statement') {
      readFromImport(statement, module, resolve);
    }
  }
  return module;
}

/** The package's modules, parsed on first use, at most EXTRACT_LIMITS.modules of them. */
export class PackageModules {
  private readonly parsed = new Map<string, Module | null>();
  private readonly trees: Tree[] = [];
  private readonly paths: Set<string>;

  constructor(
    private readonly files: ReadonlyMap<string, string>,
    private readonly parse: ParsePython,
    private readonly packageName: string,
  ) {
    this.paths = new Set(files.keys());
  }

  has(path: string): boolean {
    return this.paths.has(path);
  }

  allPaths(): string[] {
    return [...this.paths];
  }

  module(path: string): Module | undefined {
    if (this.parsed.has(path)) return this.parsed.get(path) ?? undefined;
    if (this.parsed.size >= EXTRACT_LIMITS.modules) {
      throw new ExtractLimitReached(`the package has more than ${EXTRACT_LIMITS.modules} modules to follow`);
    }
    const text = this.files.get(path);
    const tree = text === undefined ? null : this.parse(text);
    const resolve = (spec: string) => importedModule(path, spec, this.paths, this.packageName);
    const module = tree ? readModule(path, tree, resolve) : null;
    if (tree) this.trees.push(tree);
    this.parsed.set(path, module);
    return module ?? undefined;
  }

  /** Frees the syntax trees (WebAssembly memory); the modules' nodes are unusable after. */
  dispose(): void {
    for (const tree of this.trees.splice(0)) tree.delete();
  }
}
