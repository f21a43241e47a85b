// The resolution layer's entry: which files it reads (by their text, as the rules' `requires` gate
// does), and its findings as the scanner takes them.
import type { Node } from 'web-tree-sitter';
import type { ParsedLanguage } from '../rule.js';
import { resolveJavaScript } from './javascript.js';
import { PythonModule } from './python.js';
import { RESOLVE_LIMITS } from './triggers.js';
import type { Value } from './value.js';

export { needsResolution, RESOLVE_LIMITS } from './triggers.js';

export interface Resolved {
  findings: { rule: string; node: Node; message: string }[];
  cleared: Set<number>;
  loads: { path: string; line: number }[];
  incomplete?: { line: number; reason: string };
}

export function resolveTree(
  language: ParsedLanguage,
  root: Node,
  text: string,
  lookup?: (module: string) => Map<string, Value> | undefined,
): Resolved {
  if (language === 'javascript') {
    const { findings, incomplete } = resolveJavaScript(root, RESOLVE_LIMITS);
    return { findings, cleared: new Set(), loads: [], incomplete };
  }
  const result = new PythonModule(root, text, RESOLVE_LIMITS, lookup).resolve();
  return { ...result, loads: result.loads.map(({ path, node }) => ({ path, line: node.startPosition.row + 1 })) };
}
