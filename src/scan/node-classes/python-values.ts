// Literal values read from Python syntax trees: strings, booleans and sequences of them.
import type { Node } from 'web-tree-sitter';

const present = (node: Node | null | undefined): node is Node => !!node;

/** A string literal's value (implicit concatenation included); undefined for f-strings and non-literals. */
export function stringValue(node: Node | null | undefined): string | undefined {
  if (!node) return undefined;
  if (node.type === 'parenthesized_expression') return stringValue(node.namedChildren[0]);
  if (node.type === 'concatenated_string') {
    const parts = node.namedChildren.map((child) => stringValue(child));
    return parts.every((part) => part !== undefined) ? parts.join('') : undefined;
  }
  if (node.type !== 'string') return undefined;
  const children = node.namedChildren.filter(present);
  if (children.some((child) => child.type === 'interpolation')) return undefined;
  return children
    .filter((child) => child.type === 'string_content' || child.type === 'escape_sequence')
    .map((child) => (child.type === 'escape_sequence' ? unescape(child.text) : child.text))
    .join('');
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', '\\': '\\', "'": "'", '"': '"' };
const unescape = (sequence: string) => ESCAPES[sequence.slice(1)] ?? sequence;

export function boolValue(node: Node | null | undefined): boolean | undefined {
  if (node?.type === 'true') return true;
  if (node?.type === 'false') return false;
  return undefined;
}

/** The items of a tuple or list literal; a single expression is a sequence of one. */
export function sequenceItems(node: Node | null | undefined): Node[] {
  if (!node) return [];
  if (node.type === 'parenthesized_expression') return sequenceItems(node.namedChildren[0]);
  if (node.type === 'tuple' || node.type === 'list') return node.namedChildren.filter(present);
  return [node];
}

export const stringItems = (node: Node | null | undefined): string[] =>
  sequenceItems(node)
    .map((item) => stringValue(item))
    .filter((item): item is string => item !== undefined);

export const namedChildren = (node: Node | null | undefined): Node[] => node?.namedChildren.filter(present) ?? [];

/** A keyword argument of a call by name. */
export function keywordArgument(call: Node, name: string): Node | undefined {
  for (const argument of namedChildren(call.childForFieldName('arguments'))) {
    if (argument.type === 'keyword_argument' && argument.childForFieldName('name')?.text === name) {
      return argument.childForFieldName('value') ?? undefined;
    }
  }
  return undefined;
}
