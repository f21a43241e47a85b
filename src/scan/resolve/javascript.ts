// The resolution layer for JavaScript: eval and Function however they are reached (aliases, bracket
// access with folded strings, globalThis/window/self, `.constructor` of a function, `(0, eval)`), passed
// as a callback (`.then(eval)`), string timers, and code loaded from a remote URL (`import()` and script
// elements). One walk with a flat table of constant bindings; bounded as the Python layer is.
import type { Node } from 'web-tree-sitter';

type JsValue = 'eval' | 'Function' | 'global' | 'script' | 'function' | { s: string } | undefined;
const GLOBALS = new Set(['window', 'globalThis', 'self', 'top', 'parent', 'frames']);
const REMOTE = /^(?:https?:)?\/\//i;
const TIMERS = new Set(['setTimeout', 'setInterval', 'setImmediate', 'execScript']);

export interface JsFinding {
  rule: 'js-dynamic-execution' | 'js-remote-code';
  node: Node;
  message: string;
}

/** One file's walk: its constant bindings (eval, Function, the global object, a script element) and findings. */
class JsModule {
  private readonly bindings = new Map<string, JsValue>();
  readonly findings: JsFinding[] = [];
  private visited = 0;
  incomplete: { line: number; reason: string } | undefined;

  constructor(private readonly limits: { budget: number; maxDepth: number }) {}

  private report(rule: JsFinding['rule'], node: Node, message: string): void {
    if (!this.findings.some((f) => f.node.startIndex === node.startIndex)) this.findings.push({ rule, node, message });
  }

  private value(node: Node | null, depth = 0): JsValue {
    if (!node || depth > 64) return undefined;
    switch (node.type) {
      case 'identifier':
        return node.text === 'eval' || node.text === 'Function'
          ? node.text
          : GLOBALS.has(node.text)
            ? 'global'
            : this.bindings.get(node.text);
      case 'string':
        return { s: node.namedChildren.map((c) => c?.text ?? '').join('') };
      case 'template_string':
        return node.namedChildren.some((c) => c?.type === 'template_substitution')
          ? undefined
          : { s: node.namedChildren.map((c) => c?.text ?? '').join('') };
      case 'binary_expression': {
        const [left, right] = [
          this.value(node.childForFieldName('left'), depth + 1),
          this.value(node.childForFieldName('right'), depth + 1),
        ];
        return typeof left === 'object' && typeof right === 'object' ? { s: left.s + right.s } : undefined;
      }
      case 'parenthesized_expression':
      case 'sequence_expression':
        return this.value(node.namedChildren[node.namedChildren.length - 1] ?? null, depth + 1);
      case 'function_expression':
      case 'arrow_function':
      case 'function':
        return 'function';
      case 'member_expression':
      case 'subscript_expression': {
        const object = this.value(node.childForFieldName('object'), depth + 1);
        const key =
          node.type === 'member_expression'
            ? node.childForFieldName('property')?.text
            : (this.value(node.childForFieldName('index'), depth + 1) as { s: string } | undefined)?.s;
        if (key === 'constructor' && (object === 'function' || object === 'Function')) return 'Function';
        if (object === 'global' && (key === 'eval' || key === 'Function')) return key;
        return undefined;
      }
      case 'call_expression': {
        const fn = node.childForFieldName('function');
        const arg = node.childForFieldName('arguments')?.namedChildren[0];
        return fn?.text === 'document.createElement' &&
          arg &&
          (this.value(arg, depth + 1) as { s: string } | undefined)?.s?.toLowerCase() === 'script'
          ? 'script'
          : undefined;
      }
      default:
        return undefined;
    }
  }

  private call(node: Node): void {
    const fn = node.childForFieldName('function') ?? node.childForFieldName('constructor');
    const args = (node.childForFieldName('arguments')?.namedChildren ?? []).filter(
      (c): c is Node => Boolean(c) && c!.type !== 'comment',
    );
    if (fn?.type === 'import') {
      const target = this.value(args[0] ?? null);
      if (typeof target === 'object' && REMOTE.test(target.s))
        this.report('js-remote-code', node, `import() of code from ${target.s.slice(0, 80)}`);
      return;
    }
    const callee = this.value(fn ?? null);
    const computed = args.some((a) => typeof this.value(a) !== 'object');
    if ((callee === 'eval' || callee === 'Function') && computed)
      this.report(
        'js-dynamic-execution',
        node,
        `${callee === 'eval' ? 'eval' : 'Function'}() of a value computed at run time, reached as ${fn!.text.slice(0, 60)}`,
      );
    const name =
      fn?.type === 'member_expression' && this.value(fn.childForFieldName('object')) === 'global'
        ? fn.childForFieldName('property')?.text
        : fn?.text;
    if (
      name &&
      TIMERS.has(name) &&
      args[0] &&
      (typeof this.value(args[0]) === 'object' || /^(?:binary_expression|template_string)$/.test(args[0].type))
    ) {
      this.report('js-dynamic-execution', node, `${name}() of a string runs it as code`);
    }
    for (const arg of args)
      if (this.value(arg) === 'eval' || this.value(arg) === 'Function')
        this.report(
          'js-dynamic-execution',
          node,
          `passes ${arg.text.slice(0, 40)} as a callback: whatever it is called with runs as code`,
        );
    if (
      fn?.type === 'member_expression' &&
      fn.childForFieldName('property')?.text === 'setAttribute' &&
      this.value(fn.childForFieldName('object')) === 'script'
    )
      this.remoteSrc(node, (this.value(args[0] ?? null) as { s: string } | undefined)?.s, args[1]);
  }

  private remoteSrc(node: Node, key: string | undefined, target: Node | null | undefined): void {
    const v = this.value(target ?? null);
    if (key === 'src' && typeof v === 'object' && REMOTE.test(v.s))
      this.report('js-remote-code', node, `a script element loads code from ${v.s.slice(0, 80)}`);
  }

  private bind(name: Node | null, init: Node | null): void {
    if (name?.type !== 'identifier' || !init) return;
    const v = this.value(init);
    if (v === 'eval' || v === 'Function' || v === 'global' || v === 'script') this.bindings.set(name.text, v);
  }

  /** One walk of the tree, depth first, within the bounds: bindings as they come, then the calls that use them. */
  walk(root: Node): void {
    const stack: [Node, number][] = [[root, 0]];
    for (let item = stack.pop(); item; item = stack.pop()) {
      const [node, depth] = item;
      if (++this.visited > this.limits.budget || depth > this.limits.maxDepth) {
        this.incomplete = {
          line: node.startPosition.row + 1,
          reason:
            this.visited > this.limits.budget
              ? `the file holds more than ${this.limits.budget} syntax nodes, the analysis bound per file`
              : `code nested more than ${this.limits.maxDepth} levels deep at line ${node.startPosition.row + 1} was not followed`,
        };
        break;
      }
      if (node.type === 'variable_declarator')
        this.bind(node.childForFieldName('name'), node.childForFieldName('value'));
      else if (node.type === 'assignment_expression') {
        const left = node.childForFieldName('left');
        if (left?.type === 'identifier') this.bind(left, node.childForFieldName('right'));
        else if (left?.type === 'member_expression' && this.value(left.childForFieldName('object')) === 'script') {
          this.remoteSrc(node, left.childForFieldName('property')?.text, node.childForFieldName('right'));
        }
      } else if (node.type === 'call_expression' || node.type === 'new_expression') this.call(node);
      const children = node.namedChildren;
      for (let i = children.length - 1; i >= 0; i--) if (children[i]) stack.push([children[i]!, depth + 1]);
    }
  }
}

export function resolveJavaScript(
  root: Node,
  limits: { budget: number; maxDepth: number },
): { findings: JsFinding[]; incomplete?: { line: number; reason: string } } {
  const module = new JsModule(limits);
  module.walk(root);
  return { findings: module.findings, incomplete: module.incomplete };
}
