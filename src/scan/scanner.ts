// The scanner: parses a file with tree-sitter (WASM, no native build) and runs every rule of its
// language as one query, so each file is walked once. Shared by `nodereg scan`, validate, publish
// and the registry server (which runs it in a worker thread).
import { createRequire } from 'node:module';
import type { Language, Parser, Query } from 'web-tree-sitter';
import type { Finding } from '../contract/scan.js';
import { atLeast } from '../contract/scan.js';
import { SCAN_FLAG_AT, SCAN_RULE_IDS } from '../contract/limits.js';
import { toCaptures, type Rule, type ScanLanguage } from './rule.js';
import { rules } from './rules/index.js';

// Resolved through the packages, so the files are found from dist/ and from a bundle alike.
const require = createRequire(import.meta.url);
const GRAMMARS: Record<ScanLanguage, string> = {
  python: 'tree-sitter-python/tree-sitter-python.wasm',
  javascript: 'tree-sitter-javascript/tree-sitter-javascript.wasm',
};

/** The language of a file, by its extension; undefined for files no rule reads. */
export function languageOf(path: string): ScanLanguage | undefined {
  if (/\.pyw?$/i.test(path)) return 'python';
  if (/\.[cm]?js$/i.test(path)) return 'javascript';
  return undefined;
}

export interface ScanTextOptions {
  /**
   * On the registry a suppression comment cannot hide a finding at or above SCAN_FLAG_AT: its reason
   * is kept for the admin to read, and the finding stays.
   */
  server?: boolean;
}

interface Compiled {
  parser: Parser;
  query: Query;
  comments: Query;
  /** The rule of each pattern of `query`, by pattern index. */
  ruleOf: Rule[];
}

/** `# nodereg: allow RULE[, RULE] -- reason` (or `//` in JavaScript). */
const SUPPRESSION = /nodereg:\s*allow\s+([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)\s*(?:--\s*(.*?))?\s*(?:\*\/)?$/;

interface Suppression {
  line: number;
  rules: string[];
  reason: string;
}

export class Scanner {
  private constructor(private readonly languages: Record<ScanLanguage, Compiled>) {}

  static async load(): Promise<Scanner> {
    const { Parser, Language, Query } = await import('web-tree-sitter');
    await Parser.init();
    const compile = async (name: ScanLanguage): Promise<Compiled> => {
      const language: Language = await Language.load(require.resolve(GRAMMARS[name]));
      const parser = new Parser();
      parser.setLanguage(language);
      const ruleOf: Rule[] = [];
      const sources: string[] = [];
      for (const rule of rules) {
        const patterns = rule.patterns[name];
        if (!patterns) continue;
        // Compiled alone first to count its patterns, so each pattern of the whole maps to its rule.
        const alone = new Query(language, patterns);
        for (let i = 0; i < alone.patternCount(); i++) ruleOf.push(rule);
        alone.delete();
        sources.push(patterns);
      }
      return { parser, query: new Query(language, sources.join('\n')), comments: new Query(language, '(comment) @comment'), ruleOf };
    };
    return new Scanner({ python: await compile('python'), javascript: await compile('javascript') });
  }

  /** The findings in one file (suppressed ones included, marked), in line order. */
  scanText(file: string, text: string, options: ScanTextOptions = {}): Finding[] {
    const language = languageOf(file);
    if (!language) return [];
    const { parser, query, comments, ruleOf } = this.languages[language];
    const tree = parser.parse((index) => text.slice(index, index + 64 * 1024));
    if (!tree) return [];
    try {
      const found: Finding[] = [];
      const seen = new Set<string>();
      for (const match of query.matches(tree.rootNode)) {
        const rule = ruleOf[match.patternIndex];
        const captures = toCaptures(match.captures);
        const at = captures.finding;
        if (!at) continue;
        const message = rule.check ? rule.check(captures) : rule.message?.(captures) ?? rule.description;
        if (message === undefined) continue;
        const key = `${rule.id}:${at.startIndex}`;
        if (seen.has(key)) continue; // two patterns of one rule on the same node
        seen.add(key);
        found.push({
          rule: rule.id,
          severity: rule.severity,
          file,
          line: at.startPosition.row + 1,
          column: at.startPosition.column + 1,
          message,
          hint: rule.hint,
        });
      }
      if (found.length && text.includes('nodereg:')) applySuppressions(found, suppressionsIn(comments, tree.rootNode), options);
      return found.sort((a, b) => a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule));
    } finally {
      tree.delete();
    }
  }
}

function suppressionsIn(comments: Query, root: Parameters<Query['captures']>[0]): Suppression[] {
  const out: Suppression[] = [];
  for (const { node } of comments.captures(root)) {
    const match = SUPPRESSION.exec(node.text);
    if (match) out.push({ line: node.startPosition.row + 1, rules: match[1].split(/\s*,\s*/), reason: (match[2] ?? '').trim() });
  }
  return out;
}

function applySuppressions(findings: Finding[], suppressions: Suppression[], options: ScanTextOptions): void {
  for (const finding of findings) {
    const covering = suppressions.find((s) => (s.line === finding.line || s.line === finding.line - 1) && s.rules.includes(finding.rule));
    if (!covering) continue;
    if (!covering.reason) {
      finding.hint = `the comment on line ${covering.line} suppresses nothing without a reason: write \`nodereg: allow ${finding.rule} -- why it is safe\``;
      continue;
    }
    finding.reason = covering.reason;
    if (options.server && atLeast(finding.severity, SCAN_FLAG_AT)) continue;
    finding.suppressed = true;
  }
}

/** Rule ids a suppression may name. */
export const RULE_IDS: readonly string[] = SCAN_RULE_IDS;
