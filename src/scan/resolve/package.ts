// The Python modules of one package, for relative imports: what `.util` exports (its names bound to
// modules, members and functions with their summaries), resolved on first use and kept for the scan.
// Bounded: at most MAX_MODULES modules are read per scan; an import past it resolves to its name only.
import type { Tree } from 'web-tree-sitter';
import { asRead } from '../gate.js';
import { needsResolution, RESOLVE_LIMITS } from './triggers.js';
import { PythonModule } from './python.js';
import type { Value } from './value.js';

const MAX_MODULES = 256;
/** `from .util import x`, `from . import x`, `from ..pkg.mod import x`. */
const RELATIVE_IMPORT = /^[ \t]*from[ \t]+(\.+[\w.]*)[ \t]+import\b/gm;

export type Lookup = (module: string) => Map<string, Value> | undefined;

/** `.util` or `..pkg.mod` from `file`: the module's file, if the package ships it (`has`). */
export function moduleFile(file: string, module: string, has: (path: string) => boolean): string | undefined {
  const dots = /^\.*/.exec(module)![0].length;
  const parts = file.split('/').slice(0, -1);
  for (let i = 1; i < dots; i++) parts.pop();
  const rest = module.slice(dots).split('.').filter(Boolean);
  const base = [...parts, ...rest].join('/');
  const candidates = rest.length ? [`${base}.py`, `${base}/__init__.py`] : [`${base ? `${base}/` : ''}__init__.py`];
  return candidates.find(has);
}

/**
 * `from .x import`, wherever it stands (after `;`, across a backslash): more than the parse may find,
 * never less.
 */
const ANY_RELATIVE_IMPORT = /\bfrom[\s\\]+(\.+[\w.]*)[\s\\]*import\b/g;

/** The package's files that `text` (the module at `file`, as read) may import relatively. */
export function relativeImports(file: string, text: string, has: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const [, module] of text.matchAll(ANY_RELATIVE_IMPORT)) {
    const target = moduleFile(file, module, has);
    if (target && target !== file) out.push(target);
  }
  return out;
}

export class PackageModules {
  private readonly exports = new Map<string, Map<string, Value> | null>();
  private readonly trees: Tree[] = [];

  constructor(
    /** The package's Python files by archive path. */
    private readonly files: Map<string, () => string>,
    private readonly parse: (text: string) => Tree | null | undefined,
  ) {}

  private readonly triggered = new Map<string, boolean>();

  /**
   * True when a module `text` imports relatively (or one it imports, three levels down) names what the
   * resolution layer follows: a helper there may be a sink, so this module is read too.
   */
  importsTriggered(file: string, text: string, depth = 0): boolean {
    if (depth > 3) return false;
    for (const [, module] of text.matchAll(RELATIVE_IMPORT)) {
      const target = this.pathOf(file, module);
      if (!target || target === file) continue;
      let hit = this.triggered.get(target);
      if (hit === undefined) {
        this.triggered.set(target, false); // a cycle meets it as not triggered
        const source = this.files.get(target)!();
        hit = needsResolution('python', source) || this.importsTriggered(target, source, depth + 1);
        this.triggered.set(target, hit);
      }
      if (hit) return true;
    }
    return false;
  }

  /** The lookup for relative imports of `file`. */
  lookupFor =
    (file: string): Lookup =>
    (module) => {
      const target = this.pathOf(file, module);
      return target ? this.exportsOf(target) : undefined;
    };

  private pathOf(file: string, module: string): string | undefined {
    return moduleFile(file, module, (path) => this.files.has(path));
  }

  private exportsOf(path: string): Map<string, Value> | undefined {
    const known = this.exports.get(path);
    if (known !== undefined) return known ?? undefined;
    if (this.exports.size >= MAX_MODULES) return undefined;
    this.exports.set(path, null); // an import cycle meets it unresolved
    const text = asRead('python', this.files.get(path)!());
    const tree = this.parse(text);
    if (!tree) return undefined;
    this.trees.push(tree);
    const module = new PythonModule(tree.rootNode, text, RESOLVE_LIMITS, this.lookupFor(path));
    module.resolve();
    this.exports.set(path, module.module);
    return module.module;
  }

  /** Frees the parsed trees (their nodes are gone after this). */
  dispose(): void {
    for (const tree of this.trees) tree.delete();
    this.trees.length = 0;
    this.exports.clear();
  }
}
