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

export function resolveJavaScript(
  root: Node,
  limits: { budget: number; maxDepth: number },
): { findings: JsFinding[]; incomplete?: { line: number; reason: string } } {
  const bindings = new Map<string, JsValue>();
  const findings: JsFinding[] = [];
  let visited = 0;
  let incomplete: { line: number; reason: string } | undefined;
  const report = (rule: JsFinding['rule'], node: Node, message: string) => {
    if (!findings.some((f) => f.node.startIndex === node.startIndex)) findings.push({ rule, node, message });
  };

  const value = (node: Node | null, depth = 0): JsValue => {
    if (!node || depth > 64) return undefined;
    switch (node.type) {
      case 'identifier':
        return node.text === 'eval' || node.text === 'Function'
          ? node.text
          : GLOBALS.has(node.text)
            ? 'global'
            : bindings.get(node.text);
      case 'string':
        return { s: node.namedChildren.map((c) => c?.text ?? '').join('') };
      case 'template_string':
        return node.namedChildren.some((c) => c?.type === 'template_substitution')
          ? undefined
          : { s: node.namedChildren.map((c) => c?.text ?? '').join('') };
      case 'binary_expression': {
        const [left, right] = [
          value(node.childForFieldName('left'), depth + 1),
          value(node.childForFieldName('right'), depth + 1),
        ];
        return typeof left === 'object' && typeof right === 'object' ? { s: left.s + right.s } : undefined;
      }
      case 'parenthesized_expression':
      case 'sequence_expression':
        return value(node.namedChildren[node.namedChildren.length - 1] ?? null, depth + 1);
      case 'function_expression':
      case 'arrow_function':
      case 'function':
        return 'function';
      case 'member_expression':
      case 'subscript_expression': {
        const object = value(node.childForFieldName('object'), depth + 1);
        const key =
          node.type === 'member_expression'
            ? node.childForFieldName('property')?.text
            : (value(node.childForFieldName('index'), depth + 1) as { s: string } | undefined)?.s;
        if (key === 'constructor' && (object === 'function' || object === 'Function')) return 'Function';
        if (object === 'global' && (key === 'eval' || key === 'Function')) return key;
        return undefined;
      }
      case 'call_expression': {
        const fn = node.childForFieldName('function');
        const arg = node.childForFieldName('arguments')?.namedChildren[0];
        return fn?.text === 'document.createElement' &&
          arg &&
          (value(arg, depth + 1) as { s: string } | undefined)?.s?.toLowerCase() === 'script'
          ? 'script'
          : undefined;
      }
      default:
        return undefined;
    }
  };

  const call = (node: Node) => {
    const fn = node.childForFieldName('function') ?? node.childForFieldName('constructor');
    const args = (node.childForFieldName('arguments')?.namedChildren ?? []).filter(
      (c): c is Node => Boolean(c) && c!.type !== 'comment',
    );
    if (fn?.type === 'import') {
      const target = value(args[0] ?? null);
      if (typeof target === 'object' && REMOTE.test(target.s))
        report('js-remote-code', node, `import() of code from ${target.s.slice(0, 80)}`);
      return;
    }
    const callee = value(fn ?? null);
    const computed = args.some((a) => typeof value(a) !== 'object');
    if ((callee === 'eval' || callee === 'Function') && computed)
      report(
        'js-dynamic-execution',
        node,
        `${callee === 'eval' ? 'eval' : 'Function'}() of a value computed at run time, reached as ${fn!.text.slice(0, 60)}`,
      );
    const name =
      fn?.type === 'member_expression' && value(fn.childForFieldName('object')) === 'global'
        ? fn.childForFieldName('property')?.text
        : fn?.text;
    if (
      name &&
      TIMERS.has(name) &&
      args[0] &&
      (typeof value(args[0]) === 'object' || /^(?:binary_expression|template_string)$/.test(args[0].type))
    ) {
      report('js-dynamic-execution', node, `${name}() of a string runs it as code`);
    }
    for (const arg of args)
      if (value(arg) === 'eval' || value(arg) === 'Function')
        report(
          'js-dynamic-execution',
          node,
          `passes ${arg.text.slice(0, 40)} as a callback: whatever it is called with runs as code`,
        );
    if (
      fn?.type === 'member_expression' &&
      fn.childForFieldName('property')?.text === 'setAttribute' &&
      value(fn.childForFieldName('object')) === 'script'
    )
      remoteSrc(node, (value(args[0] ?? null) as { s: string } | undefined)?.s, args[1]);
  };

  const remoteSrc = (node: Node, key: string | undefined, target: Node | null | undefined) => {
    const v = value(target ?? null);
    if (key === 'src' && typeof v === 'object' && REMOTE.test(v.s))
      report('js-remote-code', node, `a script element loads code from ${v.s.slice(0, 80)}`);
  };

  const bind = (name: Node | null, init: Node | null) => {
    if (name?.type !== 'identifier' || !init) return;
    const v = value(init);
    if (v === 'eval' || v === 'Function' || v === 'global' || v === 'script') bindings.set(name.text, v);
  };

  const stack: [Node, number][] = [[root, 0]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    if (++visited > limits.budget || depth > limits.maxDepth) {
      incomplete = {
        line: node.startPosition.row + 1,
        reason:
          visited > limits.budget
            ? `the file holds more than ${limits.budget} syntax nodes, the analysis bound per file`
            : `code nested more than ${limits.maxDepth} levels deep at line ${node.startPosition.row + 1} was not followed`,
      };
      break;
    }
    if (node.type === 'variable_declarator') bind(node.childForFieldName('name'), node.childForFieldName('value'));
    else if (node.type === 'assignment_expression') {
      const left = node.childForFieldName('left');
      if (left?.type === 'identifier') bind(left, node.childForFieldName('right'));
      else if (left?.type === 'member_expression' && value(left.childForFieldName('object')) === 'script') {
        remoteSrc(node, left.childForFieldName('property')?.text, node.childForFieldName('right'));
      }
    } else if (node.type === 'call_expression' || node.type === 'new_expression') call(node);
    const children = node.namedChildren;
    for (let i = children.length - 1; i >= 0; i--) if (children[i]) stack.push([children[i]!, depth + 1]);
  }
  return { findings, incomplete };
}
