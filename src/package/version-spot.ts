// Where a project writes its version, as the manifest mapping reads it (manifest/fields.ts mapVersion):
// `[tool.nodereg] version`, else the file `[tool.comfy.version] path` names, else `[project] version`.
// `version bump` edits the text between the quotes there and leaves every other byte as it was:
// TOML is never written back from its parsed form, which would drop comments and formatting.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'smol-toml';
import { TOML_OPTIONS } from './manifest.js';
import { MANIFEST_FILE, type Table } from './manifest/types.js';
import { versionFromFile, versionLiteralSpan } from './manifest/version.js';

export interface VersionSpot {
  /** The file that holds the version, relative to the project. */
  file: string;
  /** What the manifest calls it: `[project] version`. */
  key: string;
  /** The file's text and the offsets of the version in it (between its quotes). */
  text: string;
  start: number;
  end: number;
  /** In pyproject.toml: the keys of the value, to check the edit against. */
  tomlPath?: string[];
}

const isTable = (value: unknown): value is Table =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Where the version of the project in `dir` is written, or what stops it being found. */
export function findVersionSpot(dir: string): VersionSpot | { error: string } {
  const text = readFileSync(join(dir, MANIFEST_FILE), 'utf8');
  const doc = parse(text, TOML_OPTIONS) as Table;
  const table = (parent: unknown, key: string): Table => (isTable(parent) && isTable(parent[key]) ? parent[key] : {});
  const project = table(doc, 'project');
  const tool = table(table(doc, 'tool'), 'nodereg');
  const comfy = table(table(doc, 'tool'), 'comfy');
  const dynamic = Array.isArray(project.dynamic) && project.dynamic.includes('version');
  if (tool.version !== undefined) return tomlSpot(text, ['tool', 'nodereg', 'version'], '[tool.nodereg] version');
  if (dynamic && isTable(comfy.version)) return fileSpot(dir, comfy.version.path);
  if (project.version !== undefined) return tomlSpot(text, ['project', 'version'], '[project] version');
  return { error: `${MANIFEST_FILE} sets no version: add version = "1.0.0" under [project]` };
}

function fileSpot(dir: string, path: unknown): VersionSpot | { error: string } {
  const found = versionFromFile(path, dir);
  if ('error' in found) return { error: `[tool.comfy.version] path: ${found.error}` };
  const text = readFileSync(resolve(dir, found.file), 'utf8');
  const span = versionLiteralSpan(text);
  if (!span) return { error: `cannot find the version string in ${found.file}` };
  return { file: found.file, key: `[tool.comfy.version] path (${found.file})`, text, ...span };
}

const BARE_KEY = `[A-Za-z0-9_-]+|"[^"\\\\\\n]*"|'[^'\\n]*'`;
const HEADER = new RegExp(`^\\s*\\[(\\s*(?:${BARE_KEY})(?:\\s*\\.\\s*(?:${BARE_KEY}))*)\\s*\\]\\s*(?:#.*)?$`);
/** `key = "value"` or `a.b = 'value'`: a basic string without escapes, or a literal string. */
const ASSIGNMENT = new RegExp(
  `^(\\s*(${BARE_KEY})((?:\\s*\\.\\s*(?:${BARE_KEY}))*)\\s*=\\s*)("([^"\\\\\\n]*)"|'([^'\\n]*)')`,
);

/** `a . "b.c"` → ['a', 'b.c']. */
function keyPath(text: string): string[] {
  return [...text.matchAll(new RegExp(BARE_KEY, 'g'))].map(([key]) =>
    key.startsWith('"') || key.startsWith("'") ? key.slice(1, -1) : key,
  );
}

/**
 * The version's string in pyproject.toml, found line by line under its table's header (or as a
 * dotted key). An unusual layout the scan misreads is caught by checkVersionEdit, never written.
 */
function tomlSpot(text: string, path: string[], key: string): VersionSpot | { error: string } {
  let table: string[] = [];
  let offset = 0;
  let inString: string | undefined; // inside a multi-line string, which may hold anything
  for (const line of text.split('\n')) {
    if (inString) {
      if (line.includes(inString)) inString = undefined;
      offset += line.length + 1;
      continue;
    }
    inString = opensMultiline(line);
    const header = HEADER.exec(line.replace(/\r$/, ''));
    if (header) table = keyPath(header[1]);
    const assigned = header ? undefined : ASSIGNMENT.exec(line);
    if (assigned && isDeepStrictEqual([...table, ...keyPath(assigned[2] + assigned[3])], path)) {
      const start = offset + assigned[1].length + 1;
      return {
        file: MANIFEST_FILE,
        key,
        text,
        start,
        end: start + (assigned[5] ?? assigned[6]).length,
        tomlPath: path,
      };
    }
    offset += line.length + 1;
  }
  return {
    error: `cannot find where ${key} is written as a plain string in ${MANIFEST_FILE}: change it by hand`,
  };
}

/** The delimiter of a multi-line string the line opens and leaves open. */
function opensMultiline(line: string): string | undefined {
  const first = /"""|'''/.exec(line);
  if (!first) return undefined;
  return line.split(first[0]).length % 2 === 0 ? first[0] : undefined;
}

/** The file's text with `version` in place of the old one. */
export const withVersion = (spot: VersionSpot, version: string): string =>
  spot.text.slice(0, spot.start) + version + spot.text.slice(spot.end);

/**
 * Whether the edited pyproject.toml differs from the old one in the version alone (parsed): a
 * multi-line string that looked like a table to the line scan would fail this.
 */
export function checkVersionEdit(spot: VersionSpot, edited: string, version: string): boolean {
  if (!spot.tomlPath) return true;
  const before = parse(spot.text, TOML_OPTIONS) as Table;
  let after: Table;
  try {
    after = parse(edited, TOML_OPTIONS) as Table;
  } catch {
    return false;
  }
  let at: Table = before;
  for (const key of spot.tomlPath.slice(0, -1)) at = at[key] as Table;
  at[spot.tomlPath[spot.tomlPath.length - 1]] = version;
  return isDeepStrictEqual(before, after);
}
