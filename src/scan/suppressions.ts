// Suppression comments: `# nodereg: allow RULE -- reason` (`//` in JavaScript) on a finding's line or
// the line above it.
import type { Node, Query } from 'web-tree-sitter';
import type { Finding } from '../contract/scan.js';
import { atLeast } from '../contract/limits.js';
import { SCAN_FLAG_AT } from '../shared/scan.js';
import type { ScanTextOptions } from './scanner.js';

/** `# nodereg: allow RULE[, RULE] -- reason` (or `//` in JavaScript). */
const SUPPRESSION = /nodereg:\s*allow\s+([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)\s*(?:--\s*(.*?))?\s*(?:\*\/)?$/;

interface Suppression {
  line: number;
  rules: string[];
  reason: string;
}
export type Suppressions = Map<number, Suppression[]>;

/** The suppression comments of a file, by line. */
export function suppressionsIn(comments: Query, root: Node): Suppressions {
  const out: Suppressions = new Map();
  for (const { node } of comments.captures(root)) {
    const match = SUPPRESSION.exec(node.text);
    if (!match) continue;
    const line = node.startPosition.row + 1;
    out.set(line, [
      ...(out.get(line) ?? []),
      { line, rules: match[1].split(/\s*,\s*/), reason: (match[2] ?? '').trim() },
    ]);
  }
  return out;
}

export function applySuppressions(finding: Finding, suppressions: Suppressions, options: ScanTextOptions): void {
  if (!suppressions.size) return;
  const covering = [finding.line, finding.line - 1]
    .flatMap((line) => suppressions.get(line) ?? [])
    .find((s) => s.rules.includes(finding.rule));
  if (!covering) return;
  if (!covering.reason) {
    finding.hint = `the comment on line ${covering.line} suppresses nothing without a reason: write \`nodereg: allow ${finding.rule} -- why it is safe\``;
    return;
  }
  finding.reason = covering.reason;
  if (options.server && atLeast(finding.severity, SCAN_FLAG_AT)) return;
  finding.suppressed = true;
}
