// The scanner: parses a file with tree-sitter (WASM, no native build) and runs every rule of its
// language as one query, so each file is walked once. Shared by `nodereg scan`, validate, publish
// and the registry server (which runs it in a worker thread).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Language, Node, Parser, Query, Range, Tree } from 'web-tree-sitter';
import type { Finding, ScanRuleId, SkippedFile } from '../contract/scan.js';
import { atLeast } from '../contract/limits.js';
import { notParsed, SCAN_FLAG_AT, SCAN_MAX_FINDINGS_PER_RULE } from '../shared/scan.js';
import { admittedRules, aliasesIn, asRead, type Admitted } from './gate.js';
import { languageOf } from './languages.js';
import { queried, statementsHolding } from './pieces.js';
import { statementRanges } from './statements.js';
import { applySuppressions, suppressionsIn, type Suppressions } from './suppressions.js';
import { needsResolution, resolveTree, type Resolved } from './resolve/index.js';
import type { PackageModules } from './resolve/package.js';
import { pthFindings, requirementFindings } from './resolve/text-files.js';
import { fingerprintOf, enclosingFunction } from './fingerprint.js';
import { toCaptures, type ParsedLanguage, type Rule, type ScanLanguage } from './rule.js';
import { rules } from './rules/index.js';
import { GRAMMARS, RUNTIME } from './version.js';

export { admittedRules, aliasesIn, asRead, mayFind, type Admitted } from './gate.js';

const require = createRequire(import.meta.url);

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
  limits?: { parseMs: number; budgetMs: number; parseUnits?: number; budgetUnits?: number };
  /** The work units the scan's parses have taken so far (shared by the files of one scan in one thread). */
  spent?: { units: number };
  /** Read the file as this language, whatever its name (a data file that the package runs as Python). */
  language?: ScanLanguage;
  /** The file's package: what its other modules export, for the resolution layer (relative imports). */
  package?: PackageModules;
}

interface Compiled {
  name: ParsedLanguage;
  parser: Parser;
  /** Compiles a query in this language. */
  newQuery: (source: string) => Query;
  /** Each rule's query, compiled on first use (a pattern costs ~1.5 ms to compile, measured). */
  queries: Map<Rule, Query>;
  /** Rules' queries with a file's module aliases followed, by their source. */
  aliased: Map<string, Query>;
  comments?: Query;
}

/**
 * A rule's query source with a file's aliases followed: every module it names also by the file's other
 * names for it (`import os as o` makes `o.system(x)` read as `os.system(x)`).
 */
function withAliases(source: string, aliases: Map<string, string[]>): string {
  return source
    .replace(/\(#eq\? (@\w+) "([\w.]+)"\)/g, (all, capture: string, value: string) =>
      aliases.has(value) ? `(#any-of? ${capture} "${value}")` : all,
    )
    .replace(/(?<=#any-of\? @\w+(?: "[\w.]+")*) "([\w.]+)"/g, (all, value: string) =>
      aliases.has(value) ? ` ${[value, ...aliases.get(value)!].map((v) => `"${v}"`).join(' ')}` : all,
    );
}

/** Queries compiled for aliased modules that are kept (a compile costs ~1.5 ms per pattern). */
const ALIASED_QUERIES = 64;

export class Scanner {
  private constructor(private readonly languages: Record<ParsedLanguage, Compiled>) {}

  static async load(): Promise<Scanner> {
    const { Parser, Language, Query } = await import('web-tree-sitter');
    await Parser.init({ locateFile: () => wasmFile(RUNTIME) });
    const compile = async (name: ParsedLanguage): Promise<Compiled> => {
      const language: Language = await Language.load(wasmFile(GRAMMARS[name]));
      const parser = new Parser();
      parser.setLanguage(language);
      return {
        name,
        parser,
        newQuery: (source) => new Query(language, source),
        queries: new Map(),
        aliased: new Map(),
      };
    };
    const [python, javascript] = await Promise.all([compile('python'), compile('javascript')]);
    return new Scanner({ python, javascript });
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

  /** A Python module's tree, for the resolution layer's reading of a package's other modules (the caller deletes it). */
  parsePython(text: string): Tree | null {
    return this.languages.python.parser.parse(asRead('python', text));
  }

  /** The findings in one file (suppressed ones included, marked), in line order. */
  scanText(file: string, text: string, options: ScanTextOptions = {}): Finding[] {
    return this.scanFile(file, text, options).findings;
  }

  /**
   * The findings in one file, and the rules the scan stopped looking for there: at most
   * SCAN_MAX_FINDINGS_PER_RULE unsuppressed findings of a rule (and as many suppressed ones) are taken,
   * then that rule's query stops, so a file of 270,000 findings costs its parse and little more.
   * With `options.limits`, the parse is given up at `until` (Date.now(), the scan's end) or after
   * `parseMs`, whichever comes first: such a file is `unparsed`, as one too large to parse.
   */
  scanFile(file: string, raw: string, options: ScanTextOptions = {}, gate?: Gate, until = Infinity): FileScan {
    const language = options.language ?? languageOf(file);
    if (!language) return { findings: [], stopped: [], omitted: 0 };
    if (language === 'requirements' || language === 'pth') return scanLines(file, raw, language);
    const { admitted, text, resolving } = gate ?? gateOf(file, raw, language, options.package);
    if (!admitted.length && !resolving) return { findings: [], stopped: [], omitted: 0 };
    const { limits } = options;
    const spent = options.spent ?? { units: 0 };
    const started = Date.now();
    const end = limits ? Math.min(started + limits.parseMs, until) : Infinity;
    let why: string | undefined;
    const outOfTime = () => ({
      findings: [],
      stopped: [],
      omitted: 0,
      unparsed: unscanned(
        file,
        why ?? (end === until ? notParsed.budget(limits!.budgetMs) : notParsed.parse(limits!.parseMs)),
        admitted.length || !resolving ? admitted : undefined,
      ),
    });
    if (limits?.budgetUnits !== undefined && spent.units >= limits.budgetUnits)
      why = notParsed.budgetUnits(limits.budgetUnits);
    if (why || started >= end) return outOfTime();
    const compiled = this.languages[language];
    // the statements the rules read, parsed alone where nothing else reads the file (the resolution layer,
    // suppression comments)
    const ranges =
      language === 'python' && !resolving && !text.includes('nodereg:') ? statementRanges(text, admitted) : undefined;
    const parsed = parseWithin(compiled.parser, text, ranges, { limits, spent, end });
    why = parsed.why;
    const tree = parsed.tree;
    if (!tree) return limits ? outOfTime() : { findings: [], stopped: [], omitted: 0 };
    try {
      const root = tree.rootNode;
      // read first, so that a suppressed finding never takes the place of one that is not
      let suppressions: Suppressions = new Map();
      if (text.includes('nodereg:')) {
        compiled.comments ??= compiled.newQuery('(comment) @comment');
        suppressions = suppressionsIn(compiled.comments, root);
      }
      const resolved = resolving ? resolveTree(language, root, text, options.package?.lookupFor(file)) : undefined;
      const scan = this.queryRules(compiled, root, text, admitted, {
        file,
        suppressions,
        options,
        cleared: resolved?.cleared,
      });
      if (resolved) addResolved(scan.findings, resolved, file, suppressions, options);
      scan.findings.sort((a, b) => a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule));
      return resolved?.loads.length ? { ...scan, loads: resolved.loads } : scan;
    } finally {
      tree.delete();
    }
  }

  /** The rules' queries over the statements that hold their `requires`. */
  private queryRules(
    compiled: Compiled,
    root: Node,
    text: string,
    admitted: Admitted[],
    at: { file: string; suppressions: Suppressions; options: ScanTextOptions; cleared?: Set<number> },
  ): FileScan {
    const found: Finding[] = [];
    const stopped: ScanRuleId[] = [];
    let omitted = 0;
    const aliases = compiled.name === 'python' ? aliasesIn(text) : undefined;
    for (const { rule, next } of admitted) {
      const query = this.queryOf(compiled, rule, aliases);
      const seen = new Set<number>();
      let shown = 0;
      let hidden = 0;
      pieces: for (const { node, options: range, inside } of queried(root, statementsHolding(root, next))) {
        for (const match of query.matches(node, range)) {
          const captures = toCaptures(match.captures);
          const finding = captures.finding;
          if (!finding) continue;
          // a piece that holds the rest of its node's children: the node's own matches come from another
          if (inside && (finding.startIndex < range.startIndex! || finding.endIndex > range.endIndex!)) continue;
          if (seen.has(finding.startIndex)) continue; // two patterns of one rule on the same node
          // the resolution layer found this path the node's own, or below a containment check
          if (rule.id === 'destructive-fs' && at.cleared?.has(finding.startIndex)) continue;
          const checked = rule.check ? rule.check(captures) : (rule.message?.(captures) ?? rule.description);
          if (checked === undefined) continue;
          seen.add(finding.startIndex);
          const made = makeFinding(rule, at.file, finding, checked);
          applySuppressions(made, at.suppressions, at.options);
          if (made.suppressed ? hidden++ >= SCAN_MAX_FINDINGS_PER_RULE : shown++ >= SCAN_MAX_FINDINGS_PER_RULE) {
            if (!made.suppressed) {
              stopped.push(rule.id);
              break pieces;
            }
            omitted++;
            continue;
          }
          found.push(made);
        }
      }
    }
    return { findings: found, stopped, omitted };
  }
}

/**
 * Parses `text`, or its `ranges` alone, within the limits: the parser's steps are counted through its
 * progress callback, called every ~100 of them (an error's recovery as 4), and the wall clock (`end`)
 * is the last guard. `why`: the limit that cancelled it. Ranges whose parse holds an error are read
 * again as the whole file, whose own parse may have none.
 */
function parseWithin(
  parser: Parser,
  text: string,
  ranges: Range[] | undefined,
  { limits, spent, end }: { limits: ScanTextOptions['limits']; spent: { units: number }; end: number },
): { tree: Tree | null; why?: string } {
  let units = 0;
  let why: string | undefined;
  const progressCallback = limits
    ? (state: { hasError: boolean }) => {
        units += state.hasError ? 4 : 1;
        if (limits.parseUnits !== undefined && units > limits.parseUnits) why = notParsed.units(limits.parseUnits);
        else if (limits.budgetUnits !== undefined && spent.units + units > limits.budgetUnits)
          why = notParsed.budgetUnits(limits.budgetUnits);
        return Boolean(why) || Date.now() > end;
      }
    : undefined;
  const parse = (includedRanges?: Range[]) =>
    parser.parse((index) => text.slice(index, index + 64 * 1024), null, { progressCallback, includedRanges });
  let tree = parse(ranges);
  if (tree && ranges && tree.rootNode.hasError) {
    tree.delete();
    tree = parse();
  }
  spent.units += units;
  if (!tree) parser.reset(); // or the next parse would go on with this one
  return { tree, why };
}

/** What the text gate says of a parsed file: the rules it admits, its text as read, and whether the resolution layer reads it. */
export interface Gate {
  admitted: Admitted[];
  text: string;
  resolving: boolean;
}

/** The text gate of one file (needs no WebAssembly): a file that it admits no rule and does not resolve is not parsed. */
export function gateOf(file: string, raw: string, language: ParsedLanguage, modules?: PackageModules): Gate {
  const text = asRead(language, raw);
  return {
    admitted: admittedRules(file, raw, language),
    text,
    resolving:
      needsResolution(language, text) || (language === 'python' && Boolean(modules?.importsTriggered(file, text))),
  };
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
  /** Shipped files it runs as code (relative to its directory), which the scan reads as Python too. */
  loads?: { path: string; line: number }[];
}

/** Rules the layer names where dynamic-execution's patterns see only an indirect reach. */
const SPECIFIC = new Set(['command-injection', 'runtime-install', 'unsafe-deserialization', 'bytecode-manipulation']);
const RULES = new Map(rules.map((rule) => [rule.id as string, rule]));

function makeFinding(
  rule: Rule,
  file: string,
  at: Node | { startPosition: { row: number; column: number }; text?: string },
  checked: string | { message: string; hint: string },
): Finding {
  const { message, hint } = typeof checked === 'string' ? { message: checked, hint: rule.hint } : checked;
  const fingerprint = fingerprintOf(rule.id, at.text ?? message, 'tree' in at ? enclosingFunction(at) : '');
  return {
    rule: rule.id,
    severity: rule.severity,
    file,
    line: at.startPosition.row + 1,
    column: at.startPosition.column + 1,
    message,
    hint,
    fingerprint,
  };
}

/**
 * The resolution layer's findings beside the rules': one where no rule found anything at the same place
 * (a rule's finding there says it already), and an info finding when the layer stopped early.
 */
function addResolved(
  found: Finding[],
  resolved: Resolved,
  file: string,
  suppressions: Suppressions,
  options: ScanTextOptions,
): void {
  const at = (f: { line: number; column: number }) => `${f.line}:${f.column}`;
  for (const { rule: id, node, message } of resolved.findings) {
    const finding = makeFinding(RULES.get(id)!, file, node, message);
    const here = found.filter((f) => at(f) === at(finding));
    if (here.some((f) => f.rule === finding.rule)) continue;
    applySuppressions(finding, suppressions, options);
    // dynamic-execution's "reached indirectly" gives way to what the layer found the call to be
    const generic = here.find((f) => f.rule === 'dynamic-execution' && SPECIFIC.has(finding.rule));
    if (generic) found.splice(found.indexOf(generic), 1, finding);
    else if (!here.length || finding.rule === 'code-in-data') found.push(finding);
  }
  if (resolved.incomplete) {
    const rule = RULES.get('not-fully-analysed')!;
    found.push(
      makeFinding(
        rule,
        file,
        { startPosition: { row: resolved.incomplete.line - 1, column: 0 } },
        `not fully analysed: ${resolved.incomplete.reason}`,
      ),
    );
  }
}

/** A requirements file or a .pth file, read by line (no parser). */
export function scanLines(file: string, text: string, language: 'requirements' | 'pth'): FileScan {
  const lines = language === 'requirements' ? requirementFindings(text) : pthFindings(text);
  const rows = text.split(/\r?\n|\r/);
  const findings = lines.map(({ rule: id, line, column, message }) =>
    makeFinding(
      RULES.get(id)!,
      file,
      { startPosition: { row: line - 1, column: column - 1 }, text: rows[line - 1] },
      message,
    ),
  );
  return { findings, stopped: [], omitted: 0 };
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
