// The scanner: parses a file with tree-sitter (WASM, no native build) and runs every rule of its
// language as one query, so each file is walked once. Shared by `nodereg scan`, validate, publish
// and the registry server (which runs it in a worker thread).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Language, Node, Parser, Query, QueryOptions, Tree } from 'web-tree-sitter';
import type { Finding, ScanRuleId, SkippedFile } from '../contract/scan.js';
import { atLeast } from '../contract/limits.js';
import { notParsed, SCAN_FLAG_AT, SCAN_MAX_FINDINGS_PER_RULE } from '../shared/scan.js';
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
  /**
   * How long a file's parse may run, and the scan's parses in all (SCAN_PARSE_MS, SCAN_BUDGET_MS); a
   * file past either is not parsed (FileScan.unparsed). Without them a parse runs to its end.
   */
  limits?: { parseMs: number; budgetMs: number };
}

interface Compiled {
  name: ScanLanguage;
  parser: Parser;
  /** Compiles a query in this language. */
  newQuery: (source: string) => Query;
  /** Each rule's query, compiled on first use (a pattern costs ~1.5 ms to compile, measured). */
  queries: Map<Rule, Query>;
  /** Rules' queries with a file's module aliases followed, by their source. */
  aliased: Map<string, Query>;
  comments?: Query;
}

/** `# nodereg: allow RULE[, RULE] -- reason` (or `//` in JavaScript). */
const SUPPRESSION = /nodereg:\s*allow\s+([a-z0-9-]+(?:\s*,\s*[a-z0-9-]+)*)\s*(?:--\s*(.*?))?\s*(?:\*\/)?$/;

interface Suppression {
  line: number;
  rules: string[];
  reason: string;
}
type Suppressions = Map<number, Suppression[]>;

/** Where a rule's `requires` holds in one file: the first place at or after `from`, or -1. */
type Finder = (from: number) => number;

/** A rule a file's text admits, and where its `requires` holds. */
export interface Admitted {
  rule: Rule;
  next: Finder;
}

/**
 * A language's rules as its files are tested: the names of all of them as one regular expression
 * (`\b(?:a|b|…)\b`: one pass over the text for every rule, where an expression per rule, or their
 * alternatives joined, read the text 2–3 times slower, measured) with the rules each name stands for,
 * then each rule's other text and searches.
 */
interface Gates {
  names: RegExp | undefined;
  byName: Map<string, Rule[]>;
  texts: { rule: Rule; text: RegExp }[];
  finds: Rule[];
}

const gatesByLanguage = new Map<ScanLanguage, Gates>();
function gatesOf(language: ScanLanguage): Gates {
  let gates = gatesByLanguage.get(language);
  if (!gates) {
    const own = rules.filter((rule) => rule.patterns[language]);
    const byName = new Map<string, Rule[]>();
    for (const rule of own) for (const name of rule.requires.names ?? []) byName.set(name, [...(byName.get(name) ?? []), rule]);
    gates = {
      names: byName.size ? new RegExp(`\\b(?:${[...byName.keys()].join('|')})\\b`, 'g') : undefined,
      byName,
      texts: own.flatMap((rule) => {
        const text = rule.requires.text;
        return text ? [{ rule, text: new RegExp(text.source, `${text.flags.replace(/[gy]/g, '')}g`) }] : [];
      }),
      finds: own.filter((rule) => rule.requires.find),
    };
    gatesByLanguage.set(language, gates);
  }
  return gates;
}

/** Calls `each` with every place where `pattern` (global) holds in `text`, in order. */
function placesOf(pattern: RegExp, text: string, each: (index: number, found: string) => void): void {
  pattern.lastIndex = 0;
  for (let found = pattern.exec(text); found; found = pattern.exec(text)) {
    each(found.index, found[0]);
    if (!found[0]) pattern.lastIndex++;
  }
}

/**
 * A Finder over places found in order, and a rule's own search: asked again only when `from` passes its
 * last answer, so a file's text is searched once however many statements hold the rule.
 */
function finderOf(places: number[] | undefined, find: Rule['requires']['find'], text: string): Finder {
  let i = 0;
  let asked = -1;
  let answer = -1;
  return (from) => {
    if (places && i > 0 && places[i - 1] >= from) i = 0; // asked for an earlier place
    while (places && i < places.length && places[i] < from) i++;
    let at = places && i < places.length ? places[i] : -1;
    if (find) {
      if (asked < 0 || from < asked || (answer >= 0 && from > answer)) answer = find(text, (asked = from));
      if (answer >= 0 && (at < 0 || answer < at)) at = answer;
    }
    return at;
  };
}

/**
 * The rules that can match in a file, by its text alone (each rule's `requires`), with where each
 * holds; empty for a file no rule reads. Needs no WebAssembly: a file that admits none is never parsed,
 * and a set of such files never loads the parser.
 */
export function admittedRules(file: string, raw: string): Admitted[] {
  const language = languageOf(file);
  if (!language) return [];
  const text = asRead(language, raw);
  const { names, byName, texts, finds } = gatesOf(language);
  const places = new Map<Rule, number[]>();
  const add = (rule: Rule, index: number) => {
    const list = places.get(rule);
    if (list) list.push(index);
    else places.set(rule, [index]);
  };
  if (names) placesOf(names, text, (index, name) => byName.get(name)!.forEach((rule) => add(rule, index)));
  // a module's alias stands where the module's name would (`import pickle as pk` … `pk.loads(b)`); the
  // import names the module, so a file that names none has none to follow
  const aliases = language === 'python' && places.size ? aliasesIn(text) : undefined;
  for (const [module, names] of aliases ?? []) {
    const owners = byName.get(module);
    if (owners) placesOf(new RegExp(`\\b(?:${names.join('|')})\\b`, 'g'), text, (index) => owners.forEach((rule) => add(rule, index)));
  }
  for (const { rule, text: pattern } of texts) placesOf(pattern, text, (index) => add(rule, index));
  const out: Admitted[] = [];
  for (const rule of new Set([...places.keys(), ...finds])) {
    const own = places.get(rule);
    // a rule with both names and text has two runs of places to put in order
    if (own && ((rule.requires.names && rule.requires.text) || aliases?.size)) own.sort((a, b) => a - b);
    const next = finderOf(own, rule.requires.find, text);
    if (next(0) >= 0) out.push({ rule, next });
  }
  return out;
}

/** A line break the grammar does not take for one by itself; an identifier written with a character past ASCII. */
const REREAD = /[^\0-\x0c\x0e-\x7f]/; // one class: CR, and past ASCII (U+2028, U+2029 among them)
const LONE_BREAK: Record<ScanLanguage, RegExp> = { python: /\r(?!\n)/g, javascript: /\r(?!\n)|[\u2028\u2029]/g };
/** A run of identifier characters with one past ASCII (tried only where a run starts, so each character is read about once). */
const WIDE_IDENTIFIER = /(?<!\p{XID_Continue})\p{XID_Continue}*(?:(?![\0-\x7f])\p{XID_Continue})\p{XID_Continue}*/gu;

/**
 * The text as the language reads it, for the text gate and the parser alike (both see the same
 * positions). A lone CR ends a line for Python and JavaScript (and U+2028/U+2029 for JavaScript), where
 * the grammar read `# note\reval(x)` as one comment. Python reads identifiers NFKC-normalized, so
 * `ｅｖａｌ(x)` calls eval: runs of identifier characters are normalized (NFKC keeps them identifier
 * characters, so no quote or line break appears; the columns of later findings on such a line may move).
 */
export function asRead(language: ScanLanguage, text: string): string {
  if (!REREAD.test(text)) return text;
  const lines = text.replace(LONE_BREAK[language], '\n');
  // most text is NFKC already (é, CJK comments): one native pass tells, where the identifier runs took ~60 ms per MiB
  if (language !== 'python' || !/[^\0-\x7f]/.test(lines) || lines.normalize('NFKC') === lines) return lines;
  return lines.replace(WIDE_IDENTIFIER, (run) => run.normalize('NFKC'));
}

/** `import os as o, subprocess as sp` (at a line's start, or after `;`). */
const ALIAS_IMPORT = /(?:^|;)[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)/gm;
/** Modules a rule's check reads by name (torch, yaml): their aliases are not followed, or a safe call would read as unsafe. */
const NOT_FOLLOWED = new Set(['torch', 'yaml']);

/** A Python file's module aliases: module → the names it is imported as. Empty for most files. */
export function aliasesIn(text: string): Map<string, string[]> {
  const aliases = new Map<string, string[]>();
  if (!text.includes(' as ')) return aliases;
  for (const [, list] of text.matchAll(ALIAS_IMPORT)) {
    for (const part of list.split(',')) {
      const [module, alias] = part.trim().split(/[ \t]+as[ \t]+/);
      if (alias && alias !== module && !NOT_FOLLOWED.has(module)) aliases.set(module, [...(aliases.get(module) ?? []), alias]);
    }
  }
  return aliases;
}

/**
 * A rule's query source with a file's aliases followed: every module it names also by the file's other
 * names for it (`import os as o` makes `o.system(x)` read as `os.system(x)`).
 */
function withAliases(source: string, aliases: Map<string, string[]>): string {
  return source
    .replace(/\(#eq\? (@\w+) "([\w.]+)"\)/g, (all, capture: string, value: string) => (aliases.has(value) ? `(#any-of? ${capture} "${value}")` : all))
    .replace(/(?<=#any-of\? @\w+(?: "[\w.]+")*) "([\w.]+)"/g, (all, value: string) => (aliases.has(value) ? ` ${[value, ...aliases.get(value)!].map((v) => `"${v}"`).join(' ')}` : all));
}

/** Ranges this close are queried as one: a query call costs more than walking a short gap. */
const JOIN_GAP = 256;
/** Queries compiled for aliased modules that are kept (a compile costs ~1.5 ms per pattern). */
const ALIASED_QUERIES = 64;
/** At most this much source per query call (bar one node's own matches): its matches come back all at once. */
const QUERY_BYTES = 64 * 1024;
/**
 * A query starts matches at most this deep below the node it is given: past 65,535 levels the query
 * took minutes (100,000 nested `eval(` calls: 179 s; with this bound 0.2 s). CPython refuses a file
 * with brackets nested past 200 levels, so no code that runs lies deeper.
 */
const MAX_START_DEPTH = 60_000;

type QueryRange = { startIndex: number; endIndex: number };

export class Scanner {
  private constructor(private readonly languages: Record<ScanLanguage, Compiled>) {}

  static async load(): Promise<Scanner> {
    const { Parser, Language, Query } = await import('web-tree-sitter');
    await Parser.init({ locateFile: () => wasmFile(RUNTIME) });
    const compile = async (name: ScanLanguage): Promise<Compiled> => {
      const language: Language = await Language.load(wasmFile(GRAMMARS[name]));
      const parser = new Parser();
      parser.setLanguage(language);
      return { name, parser, newQuery: (source) => new Query(language, source), queries: new Map(), aliased: new Map() };
    };
    const [python, javascript] = await Promise.all([compile('python'), compile('javascript')]);
    return new Scanner({ python, javascript });
  }

  /** A Python file's tree, read as the scan reads it (asRead), for the node-class extraction. */
  parsePython(text: string): Tree | null {
    return this.languages.python.parser.parse(asRead('python', text));
  }

  private queryOf(compiled: Compiled, rule: Rule, aliases?: Map<string, string[]>): Query {
    let query = compiled.queries.get(rule);
    if (!query) compiled.queries.set(rule, (query = compiled.newQuery(rule.patterns[compiled.name]!)));
    if (!aliases?.size) return query;
    const source = withAliases(rule.patterns[compiled.name]!, aliases);
    if (source === rule.patterns[compiled.name]) return query;
    // kept for the files that alias alike (most write `import subprocess as sp`), at most ALIASED_QUERIES of them
    let aliased = compiled.aliased.get(source);
    if (!aliased) {
      if (compiled.aliased.size >= ALIASED_QUERIES) {
        for (const old of compiled.aliased.values()) old.delete();
        compiled.aliased.clear();
      }
      compiled.aliased.set(source, (aliased = compiled.newQuery(source)));
    }
    return aliased;
  }

  /** The findings in one file (suppressed ones included, marked), in line order. */
  scanText(file: string, text: string, options: ScanTextOptions = {}, admitted = admittedRules(file, text)): Finding[] {
    return this.scanFile(file, text, options, admitted).findings;
  }

  /**
   * The findings in one file, and the rules the scan stopped looking for there: at most
   * SCAN_MAX_FINDINGS_PER_RULE unsuppressed findings of a rule (and as many suppressed ones) are taken,
   * then that rule's query stops, so a file of 270,000 findings costs its parse and little more.
   * With `options.limits`, the parse is given up at `until` (Date.now(), the scan's end) or after
   * `parseMs`, whichever comes first: such a file is `unparsed`, as one too large to parse.
   */
  scanFile(file: string, raw: string, options: ScanTextOptions = {}, admitted = admittedRules(file, raw), until = Infinity): FileScan {
    const language = languageOf(file);
    if (!language || !admitted.length) return { findings: [], stopped: [], omitted: 0 };
    const { limits } = options;
    const started = Date.now();
    const end = limits ? Math.min(started + limits.parseMs, until) : Infinity;
    const outOfTime = () => ({
      findings: [], stopped: [], omitted: 0,
      unparsed: unscanned(file, end === until ? notParsed.budget(limits!.budgetMs) : notParsed.parse(limits!.parseMs), admitted),
    });
    if (started >= end) return outOfTime();
    const text = asRead(language, raw);
    const compiled = this.languages[language];
    // the parser calls this every ~100 steps of its work (every 40–400 µs here); true cancels the parse
    const progressCallback = limits ? () => Date.now() > end : undefined;
    const tree = compiled.parser.parse((index) => text.slice(index, index + 64 * 1024), null, { progressCallback });
    if (!tree) {
      compiled.parser.reset(); // or the next parse would go on with this one
      return limits ? outOfTime() : { findings: [], stopped: [], omitted: 0 };
    }
    try {
      const root = tree.rootNode;
      // read first, so that a suppressed finding never takes the place of one that is not
      let suppressions: Suppressions = new Map();
      if (text.includes('nodereg:')) {
        compiled.comments ??= compiled.newQuery('(comment) @comment');
        suppressions = suppressionsIn(compiled.comments, root);
      }
      const found: Finding[] = [];
      const stopped: ScanRuleId[] = [];
      let omitted = 0;
      const aliases = language === 'python' ? aliasesIn(text) : undefined;
      for (const { rule, next } of admitted) {
        const query = this.queryOf(compiled, rule, aliases);
        const seen = new Set<number>();
        let shown = 0;
        let hidden = 0;
        pieces: for (const { node, options: range, inside } of queried(root, statementsHolding(root, next))) {
          for (const match of query.matches(node, range)) {
            const captures = toCaptures(match.captures);
            const at = captures.finding;
            if (!at) continue;
            // a piece that holds the rest of its node's children: the node's own matches come from another
            if (inside && (at.startIndex < range.startIndex! || at.endIndex > range.endIndex!)) continue;
            if (seen.has(at.startIndex)) continue; // two patterns of one rule on the same node
            const checked = rule.check ? rule.check(captures) : rule.message?.(captures) ?? rule.description;
            if (checked === undefined) continue;
            const { message, hint } = typeof checked === 'string' ? { message: checked, hint: rule.hint } : checked;
            seen.add(at.startIndex);
            const finding: Finding = {
              rule: rule.id,
              severity: rule.severity,
              file,
              line: at.startPosition.row + 1,
              column: at.startPosition.column + 1,
              message,
              hint,
            };
            applySuppressions(finding, suppressions, options);
            if (finding.suppressed ? hidden++ >= SCAN_MAX_FINDINGS_PER_RULE : shown++ >= SCAN_MAX_FINDINGS_PER_RULE) {
              if (!finding.suppressed) {
                stopped.push(rule.id);
                break pieces;
              }
              omitted++;
              continue;
            }
            found.push(finding);
          }
        }
      }
      found.sort((a, b) => a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule));
      return { findings: found, stopped, omitted };
    } finally {
      tree.delete();
    }
  }
}

/** What the scan of one file gives. */
export interface FileScan {
  findings: Finding[];
  /** The rules it stopped looking for after SCAN_MAX_FINDINGS_PER_RULE findings. */
  stopped: ScanRuleId[];
  /** Suppressed findings past SCAN_MAX_FINDINGS_PER_RULE of a rule: counted, not listed. */
  omitted: number;
  /** Set when its parse ran out of time (ScanTextOptions.limits). */
  unparsed?: SkippedFile;
}

/**
 * A file not parsed, with the rules its text names and the most severe of them; undefined when it names
 * none (it can hold no finding). `admitted` undefined: not read at all, so it may hold anything.
 */
export function unscanned(file: string, reason: string, admitted: Admitted[] | undefined): SkippedFile | undefined {
  if (admitted && !admitted.length) return undefined;
  if (!admitted) return { file, reason, severity: SCAN_FLAG_AT };
  const severity = admitted.map((a) => a.rule.severity).reduce((a, b) => (atLeast(a, b) ? a : b));
  return { file, reason, rules: admitted.map((a) => a.rule.id), severity };
}

/**
 * The top-level statements that hold a place where `find` holds, found as they are asked for.
 * Every match of a rule holds such a place inside its own nodes (Rule.requires), and every node below
 * the root lies inside one top-level statement: querying these ranges finds what querying the whole
 * tree finds, and a file that names `torch` once is queried for it in that one statement.
 */
function* statementsHolding(root: Node, next: Finder): Generator<Node> {
  // An ERROR root's children are looked through one by one by firstChildForIndex, from the first each
  // time (measured: 17 s for 25,600 places among 51,201 children): there they are walked once, in order.
  const children = root.type === 'ERROR' ? root.children : undefined;
  let i = 0;
  const statementAt = (at: number) => {
    if (!children) return root.firstChildForIndex(at);
    while (i < children.length && children[i].endIndex <= at) i++;
    return children[i] ?? null;
  };
  for (let at = next(0); at >= 0; ) {
    const statement = statementAt(at);
    if (!statement) break;
    yield statement;
    at = next(statement.endIndex > at ? statement.endIndex : at + 1);
  }
}

/** One query call: on `node`, over a range or not; `inside`: only matches within the range count. */
interface Piece {
  node: Node;
  options: QueryOptions;
  inside?: boolean;
}

/**
 * What to query for these statements, in pieces of at most QUERY_BYTES (one query call returns all its
 * matches at once: 270,000 of them held ~400 MB). Small neighbours are queried as one range of the
 * root. A larger statement is taken apart: its own matches (maxStartDepth 0), then its children, small
 * ones in ranges, larger ones taken apart in turn. A root that is itself an ERROR node (a file that does
 * not parse: brackets never closed) can have a child per token, and a query over a range of it reads
 * them all, ~45 µs each (measured: a 250 KiB line of open brackets held a scan worker for two minutes);
 * there each statement is queried on its own. Pieces are made as they are asked for: a rule that has
 * found its fill stops asking.
 */
function* queried(root: Node, statements: Iterable<Node>): Generator<Piece> {
  const error = root.type === 'ERROR';
  let range: QueryRange | undefined;
  const whole = (r: QueryRange): Piece => ({ node: root, options: { ...r, maxStartDepth: MAX_START_DEPTH } });
  for (const statement of statements) {
    const { startIndex, endIndex } = statement;
    if (endIndex - startIndex > QUERY_BYTES) {
      yield* apart(statement);
    } else if (error) {
      yield { node: statement, options: { maxStartDepth: MAX_START_DEPTH } };
    } else if (range && startIndex - range.endIndex <= JOIN_GAP && endIndex - range.startIndex <= QUERY_BYTES) {
      range.endIndex = Math.max(range.endIndex, endIndex);
    } else {
      if (range) yield whole(range);
      range = { startIndex, endIndex };
    }
  }
  if (range) yield whole(range);
}

/** A node over QUERY_BYTES, in pieces: its own matches, then its children's (see `queried`). */
function* apart(top: Node): Generator<Piece> {
  const stack: [Node, number][] = [[top, 0]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, depth] = item;
    yield { node, options: { maxStartDepth: 0 } };
    if (depth >= MAX_START_DEPTH) continue; // as deep as a query looks
    const larger: Node[] = [];
    let range: QueryRange | undefined;
    const piece = (r: QueryRange): Piece => ({ node, options: { ...r, maxStartDepth: MAX_START_DEPTH - depth }, inside: true });
    for (const child of node.children) {
      if (!child) continue;
      const { startIndex, endIndex } = child;
      if (endIndex - startIndex > QUERY_BYTES) larger.push(child);
      else if (range && endIndex - range.startIndex <= QUERY_BYTES) range.endIndex = endIndex;
      else {
        if (range) yield piece(range);
        range = { startIndex, endIndex };
      }
    }
    if (range) yield piece(range);
    for (let i = larger.length - 1; i >= 0; i--) stack.push([larger[i], depth + 1]);
  }
}

/** The suppression comments of a file, by line. */
function suppressionsIn(comments: Query, root: Node): Suppressions {
  const out: Suppressions = new Map();
  for (const { node } of comments.captures(root)) {
    const match = SUPPRESSION.exec(node.text);
    if (!match) continue;
    const line = node.startPosition.row + 1;
    out.set(line, [...(out.get(line) ?? []), { line, rules: match[1].split(/\s*,\s*/), reason: (match[2] ?? '').trim() }]);
  }
  return out;
}

function applySuppressions(finding: Finding, suppressions: Suppressions, options: ScanTextOptions): void {
  if (!suppressions.size) return;
  const covering = [finding.line, finding.line - 1].flatMap((line) => suppressions.get(line) ?? []).find((s) => s.rules.includes(finding.rule));
  if (!covering) return;
  if (!covering.reason) {
    finding.hint = `the comment on line ${covering.line} suppresses nothing without a reason: write \`nodereg: allow ${finding.rule} -- why it is safe\``;
    return;
  }
  finding.reason = covering.reason;
  if (options.server && atLeast(finding.severity, SCAN_FLAG_AT)) return;
  finding.suppressed = true;
}
