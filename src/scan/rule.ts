// What a scan rule is: data (id, severity, description, hint, tree-sitter query patterns per
// language, examples) plus, where a query cannot say it, a small check on the matched nodes.
// Rules match code: their patterns name syntax nodes (calls, assignments), so comments, docstrings
// and the contents of strings never match, except where a rule asks for strings on purpose.
import type { Node, QueryCapture } from 'web-tree-sitter';
import type { ScanRuleId, ScanSeverity } from '../contract/scan.js';

/** Languages parsed into a syntax tree. */
export type ParsedLanguage = 'python' | 'javascript';
/** Every kind of file the scan reads: parsed ones, and requirements files and .pth files read by line. */
export type ScanLanguage = ParsedLanguage | 'requirements' | 'pth';

/** The nodes a pattern captured, by capture name. `finding` is where the finding is reported. */
export type Captures = Record<string, Node>;

export interface Rule {
  id: ScanRuleId;
  severity: ScanSeverity;
  /** One sentence: what the rule finds and why it matters. */
  description: string;
  /** What to do instead; shown with every finding. */
  hint: string;
  /**
   * What every match holds in its own text (the names its patterns require): a file without it is
   * not parsed for this rule, and a parsed file is queried only in the top-level statements that
   * hold it. Never the decision itself, and it must stay fast: it reads every byte of every file.
   */
  requires: Requires;
  /** Tree-sitter query patterns, per language. Each pattern captures `@finding`. */
  patterns: Partial<Record<ParsedLanguage, string>>;
  /**
   * Languages where the resolution layer (src/scan/resolve/) or the line reader gives this rule's
   * findings, besides its patterns.
   */
  resolved?: ScanLanguage[];
  /**
   * Decides a match the patterns cannot decide alone (a literal argument, a keyword present):
   * returns the finding's message (with a hint of its own when this case has a plainer fix than the
   * rule's), or undefined when the match is not a finding.
   */
  check?: (captures: Captures) => string | { message: string; hint: string } | undefined;
  /** The message when there is no check. */
  message?: (captures: Captures) => string;
  /**
   * Examples, which double as the tests. In `bad` every line that must be found ends with the
   * comment `# finding` (`// finding` in JavaScript) and no other line may be found; nothing in
   * `good` may be found. The good examples include the bad call inside a comment, a docstring and
   * a string.
   */
  examples: Partial<Record<ScanLanguage, { bad: string; good: string }>>;
}

/** A rule's `requires`: any one of these holding at a place of the text. */
export interface Requires {
  /**
   * Identifiers, each found as a whole word. The names of all the rules of a language are found in
   * one pass over the text, so a name costs far less than its own regular expression.
   */
  names?: readonly string[];
  /** Other text, as a regular expression (without the `g` or `y` flag). */
  text?: RegExp;
  /** A search of its own: the index of the first place at or after `from`, or -1. */
  find?: (text: string, from: number) => number;
}

export const defineRule = (rule: Rule): Rule => rule;

export function toCaptures(captures: QueryCapture[]): Captures {
  const out: Captures = {};
  for (const capture of captures) out[capture.name] ??= capture.node;
  return out;
}

/**
 * `node` and every named node below it, in document order, walked with a stack of our own: a file may
 * nest 120,000 brackets deep, and a recursive walk overflowed the JavaScript stack there (the parser
 * and the queries, in WebAssembly, walk such a tree fine).
 */
export function* namedDescendants(node: Node): Generator<Node> {
  const stack = [node];
  for (let n = stack.pop(); n; n = stack.pop()) {
    yield n;
    const children = n.namedChildren;
    for (let i = children.length - 1; i >= 0; i--) if (children[i]) stack.push(children[i]!);
  }
}

/** A constant: a string without interpolation (or several, concatenated), a number, True/False/None. */
export function isLiteral(node: Node | null | undefined): boolean {
  if (!node) return false;
  // parts to check, without recursion: `((((("a")))))` may nest past the JavaScript stack
  const parts: (Node | null)[] = [node];
  for (let n = parts.pop(); n !== undefined; n = parts.pop()) {
    switch (n?.type) {
      case 'string':
        // Python f-strings hold `interpolation` children; JavaScript plain strings have none.
        if (n.namedChildren.some((child) => child?.type === 'interpolation')) return false;
        break;
      case 'template_string':
        if (n.namedChildren.some((child) => child?.type === 'template_substitution')) return false;
        break;
      case 'concatenated_string':
      case 'parenthesized_expression':
        for (const child of n.namedChildren) parts.push(child);
        break;
      case 'integer':
      case 'float':
      case 'number':
      case 'true':
      case 'false':
      case 'none':
      case 'null':
        break;
      default:
        return false;
    }
  }
  return true;
}

/** The text of every string literal in `node` (itself included), without quotes. */
export function stringsIn(node: Node): string[] {
  const out: string[] = [];
  for (const n of namedDescendants(node))
    if (n.type === 'string_content' || n.type === 'string_fragment') out.push(n.text);
  return out;
}

/** The `name=value` keyword argument of a Python call's argument list, if given. */
export function keywordArgument(args: Node | undefined, name: string): Node | undefined {
  for (const child of args?.namedChildren ?? []) {
    if (child?.type === 'keyword_argument' && child.childForFieldName('name')?.text === name) {
      return child.childForFieldName('value') ?? undefined;
    }
  }
  return undefined;
}

/** Positional arguments of a call's argument list. */
export function positional(args: Node | undefined): Node[] {
  return (args?.namedChildren ?? []).filter(
    (c): c is Node => Boolean(c) && c!.type !== 'keyword_argument' && c!.type !== 'comment',
  );
}

/**
 * The nodes that hold `node`, from the root down. Walked down from the root in one pass: the parser
 * keeps no parent links, so each `parent` is found from the root again, and a walk up costs the depth
 * squared (a network call 16,000 brackets deep took 13 s to place; 120,000, the scan's whole time limit).
 */
export function ancestors(node: Node): Node[] {
  const chain: Node[] = [];
  for (let n: Node | null = node.tree.rootNode; n && n.id !== node.id; n = n.childWithDescendant(node)) chain.push(n);
  return chain;
}

/** True when `node` is somewhere inside a function (or lambda): code that does not run at import. */
export function insideFunction(node: Node): boolean {
  return ancestors(node).some((n) => n.type === 'function_definition' || n.type === 'lambda');
}

/** True for a string that is a statement of its own (a docstring): not code, never a finding. */
export function isDocstring(node: Node): boolean {
  return node.parent?.type === 'expression_statement' && node.parent.namedChildCount === 1;
}
