// The scanner: parses a file with tree-sitter (WASM, no native build) and runs every rule of its
// language as one query, so each file is walked once. Shared by `nodereg scan`, validate, publish
// and the registry server (which runs it in a worker thread).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Language, Node, Parser, Query } from 'web-tree-sitter';
import type { Finding } from '../contract/scan.js';
import { atLeast } from '../contract/scan.js';
import { SCAN_FLAG_AT } from '../contract/limits.js';
import { languageOf } from './languages.js';
import { toCaptures, type Rule, type ScanLanguage } from './rule.js';
import { rules } from './rules/index.js';

const require = createRequire(import.meta.url);
const GRAMMARS: Record<ScanLanguage, string> = {
  python: 'tree-sitter-python/tree-sitter-python.wasm',
  javascript: 'tree-sitter-javascript/tree-sitter-javascript.wasm',
};
const RUNTIME = 'web-tree-sitter/web-tree-sitter.wasm';

/**
 * A WebAssembly file: the bundle carries its own copies in dist/wasm (scripts/bundle.js), so the CLI
 * of a packed tarball scans with no node_modules; from the sources it is found through its package.
 */
function wasmFile(packagePath: string): string {
  const bundled = fileURLToPath(new URL(`../wasm/${packagePath.split('/').pop()}`, import.meta.url));
  return existsSync(bundled) ? bundled : require.resolve(packagePath);
}

export interface ScanTextOptions {
  /**
   * On the registry a suppression comment cannot hide a finding at or above SCAN_FLAG_AT: its reason
   * is kept for the admin to read, and the finding stays.
   */
  server?: boolean;
}

interface Compiled {
  name: ScanLanguage;
  parser: Parser;
  /** Compiles a query in this language. */
  newQuery: (source: string) => Query;
  comments: Query;
  /** The rules with patterns in this language, and how many patterns each has. */
  rules: { rule: Rule; patterns: number }[];
  /** One query for each set of rules a file's text admits, compiled on first use. */
  queries: Map<string, { query: Query; ruleOf: Rule[] }>;
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
    await Parser.init({ locateFile: () => wasmFile(RUNTIME) });
    const compile = async (name: ScanLanguage): Promise<Compiled> => {
      const language: Language = await Language.load(wasmFile(GRAMMARS[name]));
      const parser = new Parser();
      parser.setLanguage(language);
      const own = rules.flatMap((rule) => {
        const patterns = rule.patterns[name];
        if (!patterns) return [];
        // Compiled alone once, to count its patterns (and to fail at load on a bad pattern).
        const alone = new Query(language, patterns);
        const count = alone.patternCount();
        alone.delete();
        return [{ rule, patterns: count }];
      });
      const newQuery = (source: string) => new Query(language, source);
      return { name, parser, newQuery, comments: newQuery('(comment) @comment'), rules: own, queries: new Map() };
    };
    return new Scanner({ python: await compile('python'), javascript: await compile('javascript') });
  }

  /** The rules of `compiled` a file's text admits (see Rule.requires), as one query: each file is walked once. */
  private static queryFor(compiled: Compiled, text: string) {
    const admitted = compiled.rules.filter(({ rule }) => rule.requires.test(text));
    if (!admitted.length) return undefined;
    const key = admitted.map(({ rule }) => rule.id).join(' ');
    let entry = compiled.queries.get(key);
    if (!entry) {
      const source = admitted.map(({ rule }) => rule.patterns[compiled.name]!).join('\n');
      entry = { query: compiled.newQuery(source), ruleOf: admitted.flatMap(({ rule, patterns }) => Array<Rule>(patterns).fill(rule)) };
      compiled.queries.set(key, entry);
    }
    return entry;
  }

  /** The findings in one file (suppressed ones included, marked), in line order. */
  scanText(file: string, text: string, options: ScanTextOptions = {}): Finding[] {
    const language = languageOf(file);
    if (!language) return [];
    const compiled = this.languages[language];
    const admitted = Scanner.queryFor(compiled, text);
    if (!admitted) return [];
    const { query, ruleOf } = admitted;
    const tree = compiled.parser.parse((index) => text.slice(index, index + 64 * 1024));
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
      if (found.length && text.includes('nodereg:')) applySuppressions(found, suppressionsIn(compiled.comments, tree.rootNode), options);
      return found.sort((a, b) => a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule));
    } finally {
      tree.delete();
    }
  }
}

function suppressionsIn(comments: Query, root: Node): Suppression[] {
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

