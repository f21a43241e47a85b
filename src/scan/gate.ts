// The text gate: which rules a file's text admits (each rule's `requires`), and the text as the language
// reads it. Needs no WebAssembly: a file that admits no rule is never parsed.
import { languageOf } from './languages.js';
import type { ParsedLanguage, Rule, ScanLanguage } from './rule.js';
import { needsResolution } from './resolve/triggers.js';
import { rules } from './rules/index.js';

/** Where a rule's `requires` holds in one file: the first place at or after `from`, or -1. */
export type Finder = (from: number) => number;

/** A rule a file's text admits, and where its `requires` holds. */
export interface Admitted {
  rule: Rule;
  next: Finder;
}

/**
 * A language's rules as its files are tested: the names of all of them as one regular expression
 * (`\b(?:a|b|…)\b`: one pass over the text for every rule, where an expression per rule, or their
 * alternatives joined, read the text several times slower) with the rules each name stands for,
 * then each rule's other text and searches.
 */
interface Gates {
  names: RegExp | undefined;
  byName: Map<string, Rule[]>;
  texts: { rule: Rule; text: RegExp }[];
  finds: Rule[];
}

const gatesByLanguage = new Map<ParsedLanguage, Gates>();
function gatesOf(language: ParsedLanguage): Gates {
  let gates = gatesByLanguage.get(language);
  if (!gates) {
    const own = rules.filter((rule) => rule.patterns[language]);
    const byName = new Map<string, Rule[]>();
    for (const rule of own)
      for (const name of rule.requires.names ?? []) byName.set(name, [...(byName.get(name) ?? []), rule]);
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
export function admittedRules(file: string, raw: string, language = languageOf(file)): Admitted[] {
  if (language !== 'python' && language !== 'javascript') return [];
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
    if (owners)
      placesOf(new RegExp(`\\b(?:${names.join('|')})\\b`, 'g'), text, (index) =>
        owners.forEach((rule) => add(rule, index)),
      );
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
const LONE_BREAK: Record<ParsedLanguage, RegExp> = { python: /\r(?!\n)/g, javascript: /\r(?!\n)|[\u2028\u2029]/g };
/** A run of identifier characters with one past ASCII (tried only where a run starts, so each character is read about once). */
const WIDE_IDENTIFIER = /(?<!\p{XID_Continue})\p{XID_Continue}*(?:(?![\0-\x7f])\p{XID_Continue})\p{XID_Continue}*/gu;

/**
 * The text as the language reads it, for the text gate and the parser alike (both see the same
 * positions). A lone CR ends a line for Python and JavaScript (and U+2028/U+2029 for JavaScript), where
 * the grammar read `# note\reval(x)` as one comment. Python reads identifiers NFKC-normalized, so
 * `ｅｖａｌ(x)` calls eval: runs of identifier characters are normalized (NFKC keeps them identifier
 * characters, so no quote or line break appears; the columns of later findings on such a line may move).
 */
/**
 * Whether a file's text may hold a finding: a file read by line (requirements, .pth), or one a rule
 * admits or the resolution layer reads (what the scan itself parses). A file for which this is false
 * has no findings of its own.
 */
export function mayFind(file: string, raw: string): boolean {
  const language = languageOf(file);
  if (language === 'requirements' || language === 'pth') return true;
  if (language !== 'python' && language !== 'javascript') return false;
  return admittedRules(file, raw, language).length > 0 || needsResolution(language, asRead(language, raw));
}

export function asRead(language: ParsedLanguage, text: string): string {
  if (!REREAD.test(text)) return text;
  const lines = text.replace(LONE_BREAK[language], '\n');
  // most text is NFKC already (é, CJK comments): one native pass tells, far faster than the identifier runs
  if (language !== 'python' || !/[^\0-\x7f]/.test(lines) || lines.normalize('NFKC') === lines) return lines;
  return lines.replace(WIDE_IDENTIFIER, (run) => run.normalize('NFKC'));
}

/** `import os as o, subprocess as sp` (at a line's start, or after `;`). */
const ALIAS_IMPORT =
  /(?:^|;)[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)/gm;
/** Modules a rule's check reads by name (torch, yaml): their aliases are not followed, or a safe call would read as unsafe. */
const NOT_FOLLOWED = new Set(['torch', 'yaml']);

/** A Python file's module aliases: module → the names it is imported as. Empty for most files. */
export function aliasesIn(text: string): Map<string, string[]> {
  const aliases = new Map<string, string[]>();
  if (!text.includes(' as ')) return aliases;
  for (const [, list] of text.matchAll(ALIAS_IMPORT)) {
    for (const part of list.split(',')) {
      const [module, alias] = part.trim().split(/[ \t]+as[ \t]+/);
      if (alias && alias !== module && !NOT_FOLLOWED.has(module))
        aliases.set(module, [...(aliases.get(module) ?? []), alias]);
    }
  }
  return aliases;
}
