// The resolution layer for one Python module: one walk over its statements, in order, that binds names
// to what they hold (imports and aliases, callables and modules assigned to names, attributes,
// containers and default arguments, folded constant strings) and hands every call, with its callee
// resolved to a full name, to the sinks (sinks.ts). It never runs code. Each function is walked once,
// its parameters standing for what a caller passes, so a function that passes a parameter to a sink is
// itself a sink for it (its summary). The walk visits at most `budget` nodes and follows nesting
// `maxDepth` levels deep; past either, the module is reported as not fully analysed.
import type { Node } from 'web-tree-sitter';
import { SCAN_MAX_FINDINGS_PER_RULE } from '../../shared/scan.js';
import { exprValue } from './expressions.js';
import { named } from './members.js';
import { needsResolution } from './triggers.js';
import { UNKNOWN, concat, ref, str, OWN, type FunctionInfo, type Value } from './value.js';

/** Names Python finds in builtins: their calls are resolved as `builtins.NAME`. */
const BUILTINS = new Set([
  'exec',
  'eval',
  'compile',
  'getattr',
  'setattr',
  'globals',
  'vars',
  'locals',
  '__import__',
  'open',
  'chr',
  'bytes',
  'bytearray',
  'str',
  'list',
  'tuple',
  'dict',
  'map',
  'print',
  'len',
  'sorted',
  'input',
  'breakpoint',
]);
const WORD = /[A-Za-z_]\w*/g;
/** `NAME = "…"`, `args = [`, `parts += (`: a constant or a container, which a later statement may fold or call. */
const CONSTANT_ASSIGNMENT = /^[\w.]+[ \t]*\+?=[ \t]*(?:[rRbBfFuU]{0,2}["'\[({]|chr\b|bytes\b)/;
const DEF = /^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)/gm;
const CONTAINMENT = /\b(?:commonpath|commonprefix|is_relative_to|relative_to)\b/;

export interface ResolvedFinding {
  rule:
    | 'dynamic-execution'
    | 'command-injection'
    | 'runtime-install'
    | 'network-at-import'
    | 'unsafe-deserialization'
    | 'bytecode-manipulation'
    | 'persistence'
    | 'exfiltration'
    | 'code-in-data'
    | 'install-hook';
  node: Node;
  message: string;
}

export interface Resolution {
  findings: ResolvedFinding[];
  /** Calls that destructive-fs must not report (a path of the node's own, or below a containment guard), by start index. */
  cleared: Set<number>;
  /** Shipped files this module loads as code, relative to its own directory (`/`-separated). */
  loads: { path: string; node: Node }[];
  /** Why the walk stopped early, and where. */
  incomplete?: { line: number; reason: string };
}

/** What a walk is inside of. */
export interface Context {
  fn?: FunctionInfo;
  /** Runs when the module is imported: module level, class bodies, default arguments. */
  importTime: boolean;
  /** Below a containment check (commonpath, is_relative_to). */
  guarded: boolean;
  /** The function (or module) has read a credential store. */
  flags: { credential: boolean };
}

type Scope = Map<string, Value>;

export class PythonModule {
  readonly result: Resolution = { findings: [], cleared: new Set(), loads: [] };
  readonly module: Scope = new Map();
  /** `self.NAME = value` anywhere in the module's classes. */
  readonly selfAttrs = new Map<string, Value>();
  private visited = 0;
  /** Names bound, in any scope, to something the layer follows (a module, a callable, a constant, a container). */
  private readonly tracked = new Set<string>();
  private readonly functions: FunctionInfo[] = [];

  constructor(
    readonly root: Node,
    /** The module's text, as parsed (node indexes are its indexes). */
    private readonly text: string,
    private readonly limits: { budget: number; maxDepth: number },
    /** The exports of a module of the same package (`.util` from this one), if known. */
    readonly lookup?: (module: string) => Map<string, Value> | undefined,
  ) {}

  resolve(): Resolution {
    // a call of a function defined further down is a call the layer follows
    for (const [, name] of this.text.matchAll(DEF)) this.tracked.add(name);
    const ctx: Context = { importTime: true, guarded: false, flags: { credential: false } };
    this.block(this.root, [this.module], ctx, 0);
    for (const fn of this.functions) this.walkFunction(fn);
    return this.result;
  }

  /** Binds a name in a scope, and keeps it among the names statements are tested for. */
  set(scope: Scope, name: string, value: Value): void {
    scope.set(name, value);
    if (value.k !== 'unknown' && value.k !== 'num') this.tracked.add(name);
  }

  /** True when a statement names something the layer follows (needsResolution's names) or a tracked name. */
  interesting(node: Node): boolean {
    const source = this.text.slice(node.startIndex, node.endIndex);
    if (needsResolution('python', source) || CONSTANT_ASSIGNMENT.test(source)) return true;
    for (const [word] of source.matchAll(WORD)) if (this.tracked.has(word)) return true;
    return false;
  }

  /** Counts a node against the budget; false once the walk must stop. */
  /** Counts a visit of `node`; false past the budget or the depth (the module is then not fully analysed). */
  spend(node: Node, depth: number): boolean {
    if (this.result.incomplete) return false;
    if (++this.visited > this.limits.budget)
      this.result.incomplete = {
        line: node.startPosition.row + 1,
        reason: `the module holds more than ${this.limits.budget} syntax nodes, the analysis bound per file`,
      };
    else if (depth > this.limits.maxDepth)
      this.result.incomplete = {
        line: node.startPosition.row + 1,
        reason: `code nested more than ${this.limits.maxDepth} levels deep at line ${node.startPosition.row + 1} was not followed`,
      };
    return !this.result.incomplete;
  }

  block(node: Node, scopes: Scope[], ctx: Context, depth: number): void {
    let guarded = ctx.guarded;
    for (const statement of named(node)) {
      if (!this.spend(statement, depth)) return;
      const guard =
        statement.type === 'if_statement' && CONTAINMENT.test(statement.childForFieldName('condition')?.text ?? '');
      // a statement that names nothing the layer follows, and no name bound to what it follows, changes nothing it reads
      if (guard || /^(?:import|future_import)/.test(statement.type) || this.interesting(statement)) {
        this.statement(statement, scopes, guarded === ctx.guarded ? ctx : { ...ctx, guarded }, depth + 1);
      }
      if (guard) guarded = true;
    }
  }

  private statement(node: Node, scopes: Scope[], ctx: Context, depth: number): void {
    switch (node.type) {
      case 'import_statement':
      case 'import_from_statement':
        return this.imports(node, scopes[scopes.length - 1], ctx);
      case 'expression_statement':
        for (const child of node.namedChildren) {
          if (child?.type === 'assignment' || child?.type === 'augmented_assignment')
            this.assign(child, scopes, ctx, depth);
          else if (child) this.expr(child, scopes, ctx, depth);
        }
        return;
      case 'function_definition':
        return this.define(node, scopes, ctx, depth);
      case 'decorated_definition': {
        const definition = node.childForFieldName('definition');
        return definition ? this.statement(definition, scopes, ctx, depth) : undefined;
      }
      case 'class_definition': {
        for (const base of node.childForFieldName('superclasses')?.namedChildren ?? [])
          if (base) this.expr(base, scopes, ctx, depth);
        const body = node.childForFieldName('body');
        return body ? this.block(body, [...scopes, new Map()], ctx, depth) : undefined;
      }
      case 'if_statement': {
        const condition = node.childForFieldName('condition');
        const guard = CONTAINMENT.test(condition?.text ?? '') || ctx.guarded;
        const main = /__name__\s*==\s*['"]__main__['"]/.test(condition?.text ?? '');
        return this.compound(node, scopes, { ...ctx, guarded: guard, importTime: ctx.importTime && !main }, depth);
      }
      case 'return_statement': {
        const value = node.namedChildren[0];
        const result = value ? this.expr(value, scopes, ctx, depth) : UNKNOWN;
        if (ctx.fn && !ctx.fn.returns && result.k !== 'unknown') ctx.fn.returns = result;
        return;
      }
      default:
        return this.compound(node, scopes, ctx, depth);
    }
  }

  /** Any other statement: its blocks walked, its expressions evaluated (`with open(p) as f` binds f). */
  private compound(node: Node, scopes: Scope[], ctx: Context, depth: number): void {
    for (const child of named(node)) {
      if (!this.spend(child, depth)) return;
      if (child.type === 'block') this.block(child, scopes, ctx, depth + 1);
      else if (/_clause$|^with_item$|^case_clause$/.test(child.type)) this.compound(child, scopes, ctx, depth + 1);
      else if (child.type === 'as_pattern') {
        const value = this.expr(child.namedChildren[0]!, scopes, ctx, depth + 1);
        const target = child.childForFieldName('alias')?.namedChildren[0] ?? child.childForFieldName('alias');
        if (target?.type === 'identifier') this.set(scopes[scopes.length - 1], target.text, value);
      } else if (child.type !== 'comment' && child.type !== 'identifier' && !/pattern/.test(child.type))
        this.expr(child, scopes, ctx, depth + 1);
    }
  }

  private imports(node: Node, scope: Scope, ctx: Context): void {
    const moduleName = node.type === 'import_from_statement' ? node.childForFieldName('module_name') : null;
    const from = moduleName?.text;
    for (const child of node.namedChildren) {
      if (!child || child.startIndex === moduleName?.startIndex) continue;
      const name =
        child.type === 'aliased_import'
          ? child.childForFieldName('name')?.text
          : child.type === 'dotted_name'
            ? child.text
            : undefined;
      if (!name) continue;
      const alias = child.type === 'aliased_import' ? child.childForFieldName('alias')?.text : undefined;
      const full = from ? `${from}${from.endsWith('.') ? '' : '.'}${name}` : name;
      if (from) this.set(scope, alias ?? name, this.imported(full));
      else if (alias) this.set(scope, alias, ref(name));
      else this.set(scope, name.split('.')[0], ref(name.split('.')[0]));
      if (/^pip\._internal\b/.test(full))
        this.report('runtime-install', child, `imports ${full}: pip's own code, used to install packages at run time`);
    }
  }

  /** A name imported from another module: from this package's modules, what that module binds it to. */
  private imported(full: string): Value {
    if (full.startsWith('.') && this.lookup) {
      const at = full.lastIndexOf('.');
      const exports = this.lookup(full.slice(0, at) || '.');
      const value = exports?.get(full.slice(at + 1));
      if (value) return value;
    }
    return ref(full);
  }

  private assign(node: Node, scopes: Scope[], ctx: Context, depth: number): void {
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    if (!left || !right) return;
    // `a = b = value`: the right side is itself an assignment
    if (right.type === 'assignment') this.assign(right, scopes, ctx, depth + 1);
    const source = right.type === 'assignment' ? (right.childForFieldName('right') ?? right) : right;
    let value = this.expr(source, scopes, ctx, depth);
    if (node.type === 'augmented_assignment') value = concat(this.expr(left, scopes, ctx, depth), value);
    this.bind(left, value, scopes, ctx, depth);
  }

  bind(target: Node, value: Value, scopes: Scope[], ctx: Context, depth: number): void {
    if (target.type === 'identifier') this.set(scopes[scopes.length - 1], target.text, value);
    else if (target.type === 'attribute' && target.childForFieldName('object')?.text === 'self') {
      const name = target.childForFieldName('attribute')!.text;
      this.selfAttrs.set(name, value);
      if (value.k !== 'unknown') this.tracked.add(name);
    } else if (target.type === 'subscript') {
      const container = this.expr(target.childForFieldName('value')!, scopes, ctx, depth);
      const key = target.childForFieldName('subscript');
      const name = key ? this.expr(key, scopes, ctx, depth) : UNKNOWN;
      if (container.k === 'dict' && name.k === 'str') container.entries.set(name.v, value);
    } else if (/pattern_list|tuple|list/.test(target.type))
      for (const part of target.namedChildren) if (part) this.bind(part, UNKNOWN, scopes, ctx, depth);
  }

  private define(node: Node, scopes: Scope[], ctx: Context, depth: number): void {
    const name = node.childForFieldName('name')?.text ?? '';
    const params: string[] = [];
    const defaults = new Map<string, Value>();
    for (const param of node.childForFieldName('parameters')?.namedChildren ?? []) {
      if (!param) continue;
      const id =
        param.type === 'identifier'
          ? param
          : (param.childForFieldName('name') ?? param.namedChildren.find((c) => c?.type === 'identifier'));
      if (!id) continue;
      params.push(id.text);
      const value = param.childForFieldName('value');
      // defaults are evaluated when the def runs: at import, for a module's function
      if (value) defaults.set(id.text, this.expr(value, scopes, ctx, depth));
    }
    const fn: FunctionInfo = { name, node, params, sinks: [], state: 'new', owner: this };
    (fn as FunctionInfo & { scopes: Scope[]; defaults: Map<string, Value>; guarded: boolean }).scopes = scopes;
    Object.assign(fn, { defaults, guarded: ctx.guarded });
    this.set(scopes[scopes.length - 1], name, { k: 'func', fn });
    this.functions.push(fn);
  }

  /** Walks a function's body once, its parameters standing for what callers pass. */
  walkFunction(fn: FunctionInfo): void {
    if (fn.state !== 'new') return;
    fn.state = 'walking';
    const { scopes, defaults, guarded } = fn as FunctionInfo & {
      scopes: Scope[];
      defaults: Map<string, Value>;
      guarded: boolean;
    };
    const own: Scope = new Map();
    fn.params.forEach((name, index) => {
      const fallback = defaults.get(name);
      if (fallback && fallback.k !== 'unknown' && fallback.k !== 'str' && fallback.k !== 'num')
        this.set(own, name, fallback);
      else own.set(name, { k: 'param', index, name });
    });
    const body = fn.node.childForFieldName('body');
    // the module's bindings as they stand after its top level ran (a function runs after that)
    if (body) this.block(body, [...scopes, own], { fn, importTime: false, guarded, flags: { credential: false } }, 1);
    fn.state = 'done';
  }

  private readonly reported = new Set<string>();
  private readonly perRule = new Map<string, number>();

  /** Keeps a finding: once per rule and call, at most SCAN_MAX_FINDINGS_PER_RULE per rule (as the rules stop). */
  report(rule: ResolvedFinding['rule'], node: Node, message: string): void {
    const key = `${rule}:${node.startIndex}`;
    const count = this.perRule.get(rule) ?? 0;
    if (this.reported.has(key) || count >= SCAN_MAX_FINDINGS_PER_RULE) return;
    this.reported.add(key);
    this.perRule.set(rule, count + 1);
    this.result.findings.push({ rule, node, message });
  }

  lookupName(name: string, scopes: Scope[]): Value {
    for (let i = scopes.length - 1; i >= 0; i--) {
      const value = scopes[i].get(name);
      if (value) return value;
    }
    if (name === '__builtins__' || name === 'builtins') return ref('builtins');
    if (name === '__file__') return str(`${OWN}/__file__`);
    return BUILTINS.has(name) ? ref(`builtins.${name}`) : UNKNOWN;
  }

  /** What an expression holds, as far as the layer follows it (expressions.ts). */
  expr(node: Node, scopes: Scope[], ctx: Context, depth: number): Value {
    return exprValue(this, node, scopes, ctx, depth);
  }
}
