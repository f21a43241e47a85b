// Reading syntax children, and `value.name` as the resolution layer follows it.
import type { Node } from 'web-tree-sitter';
import { ref, UNKNOWN, type Value } from './value.js';

/** A node's named children, one at a time (a list of 100,000 items is not made into 100,000 objects at once). */
export function* named(node: Node): Generator<Node> {
  const cursor = node.walk();
  try {
    if (!cursor.gotoFirstChild()) return;
    do if (cursor.nodeIsNamed && cursor.nodeType !== 'comment') yield cursor.currentNode;
    while (cursor.gotoNextSibling());
  } finally {
    cursor.delete();
  }
}

/** `value.name`: a module's member, a bound method, `__dict__`, `__call__`, an attribute set on self. */
export function member(value: Value, name: string, selfAttrs: ReadonlyMap<string, Value>, node: Node): Value {
  if (name === '__call__' && (value.k === 'ref' || value.k === 'func' || value.k === 'lambda')) return value;
  if (node.childForFieldName('object')?.text === 'self') return selfAttrs.get(name) ?? UNKNOWN;
  switch (value.k) {
    case 'ref':
      if (name === '__dict__') return { k: 'ns', path: value.path };
      if (value.path === 'builtins.__dict__') return ref(`builtins.${name}`);
      return ref(`${value.path}.${name}`);
    case 'instance':
      return ref(`${value.of}().${name}`);
    case 'str':
      if (name === 'parent')
        return value.v.includes('/') ? { k: 'str', v: value.v.slice(0, value.v.lastIndexOf('/')) } : UNKNOWN;
      return { k: 'bound', self: value, name };
    case 'list':
    case 'file':
    case 'filetext':
      return { k: 'bound', self: value, name };
    case 'ns':
      return name === '__builtins__' ? ref('builtins') : UNKNOWN;
    default:
      return UNKNOWN;
  }
}
