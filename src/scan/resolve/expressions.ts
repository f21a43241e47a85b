// What a Python expression holds, as the resolution layer follows it (python.ts): names through the
// scopes, folded constant strings, containers, attributes of modules, subscripts of builtins,
// sys.modules and __dict__, and calls (calls.ts). Never runs code.
import type { Node } from 'web-tree-sitter';
import { callValue } from './calls.js';
import { member, named } from './members.js';
import type { Context, PythonModule } from './python.js';
import { UNKNOWN, concat, joinPath, ref, str, unescape, SITE, UNKNOWN_PART, type Value } from './value.js';

type Scope = Map<string, Value>;

export function exprValue(m: PythonModule, node: Node, scopes: Scope[], ctx: Context, depth: number): Value {
  if (!m.spend(node, depth)) return UNKNOWN;
  switch (node.type) {
    case 'identifier':
      return m.lookupName(node.text, scopes);
    case 'string':
      return stringValue(m, node, scopes, ctx, depth);
    case 'concatenated_string':
      return node.namedChildren.reduce<Value>(
        (acc, part) => concat(acc, m.expr(part!, scopes, ctx, depth + 1)),
        str(''),
      );
    case 'integer':
      return { k: 'num', v: Number(node.text.replace(/_/g, '')) };
    case 'true':
    case 'false':
    case 'none':
      return ref(`builtins.${node.text}`);
    case 'parenthesized_expression':
    case 'await':
      return node.namedChildren[0] ? m.expr(node.namedChildren[0], scopes, ctx, depth + 1) : UNKNOWN;
    case 'list':
    case 'tuple':
    case 'set':
      return { k: 'list', items: [...named(node)].map((c) => m.expr(c, scopes, ctx, depth + 1)) };
    case 'dictionary': {
      const entries = new Map<string, Value>();
      for (const pair of named(node)) {
        if (pair.type !== 'pair') continue;
        const key = m.expr(pair.childForFieldName('key')!, scopes, ctx, depth + 1);
        const value = m.expr(pair.childForFieldName('value')!, scopes, ctx, depth + 1);
        if (key.k === 'str') entries.set(key.v, value);
      }
      return { k: 'dict', entries };
    }
    case 'binary_operator': {
      const left = m.expr(node.childForFieldName('left')!, scopes, ctx, depth + 1);
      const right = m.expr(node.childForFieldName('right')!, scopes, ctx, depth + 1);
      const operator = node.childForFieldName('operator')?.text;
      if (operator === '+') return concat(left, right);
      if (operator === '/' && (left.k === 'str' || right.k === 'str')) return joinPath([left, right]);
      return UNKNOWN;
    }
    case 'lambda':
      return { k: 'lambda', node };
    case 'attribute':
      return member(
        m.expr(node.childForFieldName('object')!, scopes, ctx, depth + 1),
        node.childForFieldName('attribute')!.text,
        m.selfAttrs,
        node,
      );
    case 'subscript':
      return subscriptValue(m, node, scopes, ctx, depth);
    case 'call':
      return callValue(m, node, scopes, ctx, depth + 1);
    default:
      // what is not a value we follow is still walked: the calls inside it are calls
      for (const child of named(node)) m.expr(child, scopes, ctx, depth + 1);
      return UNKNOWN;
  }
}

function stringValue(m: PythonModule, node: Node, scopes: Scope[], ctx: Context, depth: number): Value {
  let out = '';
  for (const child of node.namedChildren) {
    if (child?.type === 'string_content') out += unescape(child.text);
    else if (child?.type === 'escape_sequence') out += unescape(child.text);
    else if (child?.type === 'interpolation') {
      const inner = child.namedChildren[0];
      const value = inner ? m.expr(inner, scopes, ctx, depth + 1) : UNKNOWN;
      out += value.k === 'str' ? value.v : value.k === 'num' ? String(value.v) : UNKNOWN_PART;
    }
  }
  return str(out);
}

function subscriptValue(m: PythonModule, node: Node, scopes: Scope[], ctx: Context, depth: number): Value {
  const container = m.expr(node.childForFieldName('value')!, scopes, ctx, depth + 1);
  const keyNode = node.childForFieldName('subscript');
  const key = keyNode ? m.expr(keyNode, scopes, ctx, depth + 1) : UNKNOWN;
  if (key.k === 'num' && container.k === 'list') return container.items.at(key.v) ?? UNKNOWN;
  if (key.k !== 'str')
    return container.k === 'list' && container.items[0]?.k === 'str' && container.items[0].v.startsWith(SITE)
      ? container.items[0]
      : UNKNOWN;
  if (container.k === 'dict') return container.entries.get(key.v) ?? UNKNOWN;
  if (container.k === 'ns') return container.path ? ref(`${container.path}.${key.v}`) : m.lookupName(key.v, [m.module]);
  if (container.k === 'ref') {
    if (container.path === 'builtins') return ref(`builtins.${key.v}`);
    if (container.path === 'sys.modules') return ref(key.v);
    if (container.path === 'os.environ') return str(`${UNKNOWN_PART}${key.v}${UNKNOWN_PART}`);
  }
  return UNKNOWN;
}
