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
  /** Each rule's query, compiled on first use (a pattern costs ~1.5 ms to compile, measured). */
  queries: Map<Rule, Query>;
  comments?: Query;
}

/** `# nodereg: allow RULE[, RULE] -- reason` (or `//` in JavaScript). */
const SUPPRESSION = /nodereg:\s*allow\s+([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)\s*(?:--\s*(.*?))?\s*(?:\*\/)?$/;

interface Suppression {
  line: number;
  rules: string[];
  reason: string;
}

/** A rule a file's text admits, and where its `requires` first holds. */
export interface Admitted {
  rule: Rule;
  first: number;
}

/** `requires` as one function: the index of the first place at or after `from`, or -1. */
type Finder = (text: string, from: number) => number;
const finders = new Map<Rule, Finder>();
function finderOf(rule: Rule): Finder {
  let finder = finders.get(rule);
  if (!finder) {
    const requires = rule.requires;
    if (typeof requires === 'function') finder = requires;
    else {
      const global = new RegExp(requires.source, requires.flags.includes('g') ? requires.flags : `${requires.flags}g`);
      finder = (text, from) => {
        global.lastIndex = from;
        return global.exec(text)?.index ?? -1;
      };
    }
    finders.set(rule, finder);
  }
  return finder;
}

/**
 * A language's rules as its files are tested: those whose `requires` is a regular expression joined
 * into one per set of flags (the text is read once for all of them, not once per rule; each place it
 * finds is then tried against each rule still waiting), and those given as a function.
 */
interface Gates {
  joined: { any: RegExp; waiting: { rule: Rule; at: RegExp }[] }[];
  functions: Rule[];
}

const gatesByLanguage = new Map<ScanLanguage, Gates>();
function gatesOf(language: ScanLanguage): Gates {
  let gates = gatesByLanguage.get(language);
  if (!gates) {
    const own = rules.filter((rule) => rule.patterns[language]);
    const byFlags = new Map<string, { rule: Rule; requires: RegExp }[]>();
    for (const rule of own) {
      if (typeof rule.requires === 'function') continue;
      const flags = rule.requires.flags.replace(/[gy]/g, '');
      byFlags.set(flags, [...(byFlags.get(flags) ?? []), { rule, requires: rule.requires }]);
    }
    const joined = [...byFlags].map(([flags, members]) => ({
      any: new RegExp(members.map(({ requires }) => `(?:${requires.source})`).join('|'), `${flags}g`),
      waiting: members.map(({ rule, requires }) => ({ rule, at: new RegExp(requires.source, `${flags}y`) })),
    }));
    gatesByLanguage.set(language, (gates = { joined, functions: own.filter((rule) => typeof rule.requires === 'function') }));
  }
  return gates;
}

/**
 * The rules that can match in a file, by its text alone (each rule's `requires`), with where each first
 * holds; empty for a file no rule reads. Needs no WebAssembly: a file that admits none is never parsed,
 * and a set of such files never loads the parser.
 */
export function admittedRules(file: string, text: string): Admitted[] {
  const language = languageOf(file);
  if (!language) return [];
  const { joined, functions } = gatesOf(language);
  const out: Admitted[] = [];
  for (const { any, waiting: all } of joined) {
    let waiting = all;
    any.lastIndex = 0;
    for (let found = any.exec(text); found && waiting.length; found = any.exec(text)) {
      const first = found.index;
      waiting = waiting.filter(({ rule, at }) => {
        at.lastIndex = first;
        return !(at.test(text) && out.push({ rule, first }));
      });
      any.lastIndex = first + 1; // a place inside this match may start another rule's
    }
  }
  for (const rule of functions) {
    const first = finderOf(rule)(text, 0);
    if (first >= 0) out.push({ rule, first });
  }
  return out;
}

/** Ranges this close are queried as one: a query call costs more than walking a short gap. */
const JOIN_GAP = 256;

export class Scanner {
  private constructor(private readonly languages: Record<ScanLanguage, Compiled>) {}

  static async load(): Promise<Scanner> {
    const { Parser, Language, Query } = await import('web-tree-sitter');
    await Parser.init({ locateFile: () => wasmFile(RUNTIME) });
    const compile = async (name: ScanLanguage): Promise<Compiled> => {
      const language: Language = await Language.load(wasmFile(GRAMMARS[name]));
      const parser = new Parser();
      parser.setLanguage(language);
      return { name, parser, newQuery: (source) => new Query(language, source), queries: new Map() };
    };
    const [python, javascript] = await Promise.all([compile('python'), compile('javascript')]);
    return new Scanner({ python, javascript });
  }

  private queryOf(compiled: Compiled, rule: Rule): Query {
    let query = compiled.queries.get(rule);
    if (!query) compiled.queries.set(rule, (query = compiled.newQuery(rule.patterns[compiled.name]!)));
    return query;
  }

  /** The findings in one file (suppressed ones included, marked), in line order. */
  scanText(file: string, text: string, options: ScanTextOptions = {}, admitted = admittedRules(file, text)): Finding[] {
    const language = languageOf(file);
    if (!language || !admitted.length) return [];
    const compiled = this.languages[language];
    const tree = compiled.parser.parse((index) => text.slice(index, index + 64 * 1024));
    if (!tree) return [];
    try {
      const root = tree.rootNode;
      const found: Finding[] = [];
      const seen = new Set<string>();
      for (const { rule, first } of admitted) {
        const query = this.queryOf(compiled, rule);
        for (const range of statementsHolding(root, text, finderOf(rule), first)) {
          for (const match of query.matches(root, range)) {
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
        }
      }
      if (found.length && text.includes('nodereg:')) {
        compiled.comments ??= compiled.newQuery('(comment) @comment');
        applySuppressions(found, suppressionsIn(compiled.comments, root), options);
      }
      return found.sort((a, b) => a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule));
    } finally {
      tree.delete();
    }
  }
}

/**
 * The top-level statements that hold a place where `find` holds, as index ranges, neighbours joined.
 * Every match of a rule holds such a place inside its own nodes (Rule.requires), and every node below
 * the root lies inside one top-level statement: querying these ranges finds what querying the whole
 * tree finds, and a file that names `torch` once is queried for it in that one statement.
 */
function statementsHolding(root: Node, text: string, find: Finder, first: number): { startIndex: number; endIndex: number }[] {
  const ranges: { startIndex: number; endIndex: number }[] = [];
  for (let at = first; at >= 0; ) {
    const statement = root.firstChildForIndex(at);
    if (!statement) break;
    const { startIndex, endIndex } = statement;
    const last = ranges[ranges.length - 1];
    if (last && startIndex - last.endIndex <= JOIN_GAP) last.endIndex = Math.max(last.endIndex, endIndex);
    else ranges.push({ startIndex, endIndex });
    at = endIndex > at ? find(text, endIndex) : find(text, at + 1);
  }
  return ranges;
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

