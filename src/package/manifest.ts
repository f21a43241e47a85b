// pyproject.toml → the publish request, mapped as DESIGN.md §6's table says. The wire rules come from
// the contract's schemas; this file only knows where in pyproject.toml each request field comes from,
// so that every problem names the key to fix. `[tool.nodereg]` wins; where it lacks a key, the
// incumbent client's `[tool.comfy]` table and `[project] classifiers` are read as that client reads them.
// A valid manifest is checked without zod (contract/requests.ts); zod words the problems of one that is not.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { fieldKey } from '../shared/field-keys.js';
import { isPublisherId, PUBLISHER_ID } from '../contract/limits.js';
import { checkRequest, nodeWritable } from '../contract/requests.js';
import type { PublishBody } from '../contract/resources.js';
import { normalizeVersion } from '../contract/version.js';
import { formatSize } from '../contract/size.js';

export const MANIFEST_FILE = 'pyproject.toml';

/** One thing to fix, named by where it is set: `[project] name`, `[tool.nodereg] publisher`, `--changelog`… */
export interface Problem {
  key: string;
  message: string;
}

/** Where the changelog came from, named as the user set it. */
export interface ChangelogInput {
  text: string;
  source: string;
}

export interface ManifestOptions {
  /** `--publisher`, which wins over `[tool.nodereg] publisher`. */
  publisher?: string;
  changelog?: ChangelogInput;
  /** pack needs no publisher; validate and publish do. */
  requirePublisher?: boolean;
  /** The project directory, where a version file named by `[tool.comfy.version] path` is read. */
  dir?: string;
}

/** `[project] license`, before it is resolved against the file set. */
export type LicenseSpec = { kind: 'file'; path: string } | { kind: 'spdx'; value: string; files: string[] } | undefined;

export interface Manifest {
  publisherId?: string;
  nodeId?: string;
  version?: string;
  /** `node` and `node_version` of the request, still unvalidated (license not resolved yet). */
  node: Record<string, unknown>;
  nodeVersion: Record<string, unknown>;
  license: LicenseSpec;
  includes: string[];
  /** The key `includes` came from (`[tool.nodereg] includes` or `[tool.comfy] includes`). */
  includesKey: string;
  excludes: string[];
  problems: Problem[];
  warnings: string[];
  /** Request field path (`node.description`, `publisher`) → the key that sets it, for naming schema problems. */
  keys: Map<string, string>;
}

const P = (key: string) => `[project] ${key}`;
const T = (key: string) => `[tool.nodereg] ${key}`;
const C = (key: string) => `[tool.comfy] ${key}`;

/** `[tool.nodereg]` keys → the incumbent's `[tool.comfy]` keys, read when ours is not set. */
const COMFY_KEYS: Record<string, string> = {
  publisher: 'PublisherId',
  'display-name': 'DisplayName',
  icon: 'Icon',
  'banner-url': 'Banner',
  includes: 'includes',
  'requires-app': 'requires-comfyui',
};

/** The incumbent's classifiers: `Operating System :: X` for these X, and `Environment :: GPU/NPU :: X`. */
const OS_CLASSIFIER = 'Operating System :: ';
const KNOWN_OS = ['Microsoft', 'POSIX', 'MacOS', 'OS Independent'];
const ACCELERATOR_CLASSIFIER = /^Environment :: ((?:GPU|NPU) :: .*)$/;
const KNOWN_ACCELERATORS = ['GPU :: NVIDIA CUDA', 'GPU :: AMD ROCm', 'GPU :: Intel Arc', 'GPU :: Apple Metal', 'NPU :: Huawei Ascend'];
/**
 * A part of a `requires-comfyui` value as the incumbent client takes it (parts comma-separated): an
 * optional operator and an X.Y.Z version. It sends none for a value with another part (`>=v0.3.0`,
 * `0.3.x`), and a registry serving it cannot compare such a value with the host's version.
 */
const INCUMBENT_REQUIREMENT_PART = /^(?:(?:==|>=|<=|!=|~=|>|<|<>|=)\s*)?(?:\d+\.\d+\.\d+(?:-[a-zA-Z0-9]+)?)?$/;
const isIncumbentRequirement = (value: string) => value.split(',').every((part) => INCUMBENT_REQUIREMENT_PART.test(part.trim()));
const notARequirement = (key: string, value: string) =>
  `${key} "${value}" is not a version requirement the registry can use (an operator and an X.Y.Z version, parts separated by commas: ">=0.3.0", ">=0.3.0, <0.4.0"); it is not sent, as the incumbent client sends none`;
/** The host's frontend, which the incumbent reads from `[project] dependencies` as the frontend requirement. */
const FRONTEND_DEPENDENCY = /^\s*comfyui[-_.]frontend[-_.]package(?![a-z0-9_.-])\s*(.*)$/i;

/** Node fields that [project] sets (mapped below as PEP 621 defines its keys). */
const FROM_PROJECT = new Set(['name', 'description', 'author', 'license', 'repository']);
/**
 * `[tool.nodereg]` keys → request fields: every other node field a member writes, except deprecated
 * ones and objects. The supported-* ones say what the code supports: they are sent on the node and
 * the version.
 */
const NODE_KEYS = new Map(
  nodeWritable.filter(({ field, type, deprecated }) => !FROM_PROJECT.has(field) && !deprecated && type !== 'record').map(({ field }) => [fieldKey(field), field]),
);
const onVersionToo = (field: string) => field.startsWith('supported_');
const TOOL_KEYS = [
  'publisher', 'version', 'display-name', 'includes', 'excludes',
  ...NODE_KEYS.keys(),
];

type Table = Record<string, unknown>;
const isTable = (value: unknown): value is Table => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

// ---------- versions ----------

/** PEP 440, as the packaging specification writes it (case-insensitive, leading `v` allowed). */
const PEP440 = new RegExp(
  '^v?(?:(?<epoch>[0-9]+)!)?(?<release>[0-9]+(?:\\.[0-9]+)*)' +
    '(?<pre>[-_.]?(?<preL>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?<preN>[0-9]+)?)?' +
    '(?<post>-(?<postN1>[0-9]+)|[-_.]?(?<postL>post|rev|r)[-_.]?(?<postN2>[0-9]+)?)?' +
    '(?<dev>[-_.]?dev[-_.]?(?<devN>[0-9]+)?)?' +
    '(?:\\+(?<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?$',
  'i',
);
const PRE_LABEL: Record<string, string> = { a: 'alpha', alpha: 'alpha', b: 'beta', beta: 'beta', c: 'rc', rc: 'rc', pre: 'rc', preview: 'rc' };

/** A version, with a note when part of what was written was dropped (build metadata), or an error. */
export type VersionResult = { version: string; note?: string } | { error: string };

const buildDropped = (text: string, build: string, version: string) =>
  `"${text}": the registry keeps no build metadata, so "+${build}" is dropped and ${version} is published`;

/**
 * A PEP 440 version → semver: `X.Y.Z` as is, `X.Y` → `X.Y.0`, `X` → `X.0.0`, `aN`/`bN`/`rcN` →
 * `-alpha.N`/`-beta.N`/`-rc.N`; a local version (`+cu121`) is dropped with a note, as the server drops
 * build metadata. Epochs, post and dev releases have no semver form: the error says what to write.
 */
export function pep440ToSemver(text: string): VersionResult {
  const m = PEP440.exec(text.trim());
  if (!m?.groups) return { error: `"${text}" is not a version: write X.Y.Z, e.g. "1.2.3"` };
  const g = m.groups;
  const release = g.release.split('.').map((part) => String(Number(part)));
  const core = [...release, '0', '0'].slice(0, 3).join('.');
  if (release.length > 3) {
    // PEP 440 orders 1.0.0.1 after 1.0.0 and before 1.0.1: the next patch is the least semver not lower
    // (1.0.0-1 would be a pre-release, before 1.0.0). Only zeros after the third number (1.0.0.0) equal X.Y.Z.
    const next = release.slice(3).every((part) => part === '0') ? core : bumpPatch(release);
    const lower = next === core ? '' : ` (the next patch version: "${core}" would be lower, and may be published already)`;
    const pre = g.pre === undefined ? '' : `${{ alpha: 'a', beta: 'b', rc: 'rc' }[PRE_LABEL[g.preL.toLowerCase()]]}${Number(g.preN ?? 0)}`;
    return { error: `"${text}" has ${release.length} release numbers; a registry version has three (X.Y.Z): write "${next}${pre}"${lower}` };
  }
  if (g.epoch !== undefined) return { error: `"${text}" has an epoch (${g.epoch}!), which a registry version cannot express: write "${core}" in [tool.nodereg] version` };
  if (g.post !== undefined) return { error: `"${text}" is a post-release, which a registry version cannot express: publish the next patch version instead (e.g. "${bumpPatch(release)}")` };
  if (g.dev !== undefined) {
    return { error: `"${text}" is a development release, which a registry version cannot express: use a pre-release such as "${core}a1" (published as ${core}-alpha.1), or set [tool.nodereg] version = "${core}-dev.${Number(g.devN ?? 0)}"` };
  }
  const pre = g.pre !== undefined ? `-${PRE_LABEL[g.preL.toLowerCase()]}.${Number(g.preN ?? 0)}` : '';
  const version = core + pre;
  return g.local === undefined ? { version } : { version, note: buildDropped(text, g.local, version) };
}

function bumpPatch(release: string[]): string {
  const [x, y = '0', z = '0'] = release;
  return `${x}.${y}.${Number(z) + 1}`;
}

/**
 * A version as a manifest writes it: a registry version (semver, short forms allowed) is taken as it
 * is, which is what the incumbent client sends; anything else is read as PEP 440. So `1.0.0-alpha`
 * and `1.0.0-SNAPSHOT` publish as written, and `1.0a1` as `1.0.0-alpha.1`.
 */
export function versionToSemver(text: string): VersionResult {
  const direct = normalizeVersion(text);
  if (!direct) return pep440ToSemver(text);
  return direct.build === undefined ? { version: direct.version } : { version: direct.version, note: buildDropped(text, direct.build, direct.version) };
}

/** The largest file read for `__version__`. */
const VERSION_FILE_MAX = 1024 * 1024;

/** The first line that assigns `name` at its start (an annotation allowed): the name and what it assigns. */
const assignment = (name: '__version__' | 'VERSION') => new RegExp(`^(${name})[ \\t]*(?::[^=\\n]+)?=(?!=)[ \\t]*([^\\n]*)`, 'm');
/**
 * A plain string literal and nothing after it but a comment: the file is read as text, never run, so
 * an f-string, a concatenation, a join or a call (`'.'.join(...)` would read as ".") is not a version.
 */
const PLAIN_STRING = /^(?:"([^"\\\n]*)"|'([^'\\\n]*)')[ \t]*(?:#.*)?$/;

/**
 * The incumbent's dynamic version: `[tool.comfy.version] path` names a file inside the project that
 * assigns the version; it is read as text, never run.
 */
function versionFromFile(path: unknown, dir: string | undefined): { version: string; file: string } | { error: string } {
  if (typeof path !== 'string' || path === '') return { error: 'must name the file that sets __version__, e.g. path = "my_node/version.py"' };
  const root = resolve(dir ?? '.');
  const file = resolve(root, path);
  if (isAbsolute(path) || relative(root, file).startsWith('..')) return { error: `"${path}" must be a path inside the project` };
  let text: string;
  try {
    // What a symlink leads to must be inside too, and a regular file of a few lines: a FIFO would block the read forever.
    const real = realpathSync(file);
    if (relative(realpathSync(root), real).startsWith('..')) return { error: `"${path}" is a symlink that leads out of the project` };
    const stat = statSync(real);
    if (!stat.isFile()) return { error: `"${path}" is not a regular file` };
    if (stat.size > VERSION_FILE_MAX) return { error: `"${path}" is ${formatSize(stat.size)}; a file that sets __version__ is a few lines` };
    text = readFileSync(real, 'utf8').replace(/^\ufeff/, '');
  } catch (error) {
    return { error: `cannot read "${path}": ${(error as Error).message}` };
  }
  const match = assignment('__version__').exec(text) ?? assignment('VERSION').exec(text);
  if (!match) return { error: `"${path}" has no line such as __version__ = "1.2.3"` };
  const [, name, value] = match;
  const literal = PLAIN_STRING.exec(value.trimEnd());
  if (!literal) {
    const shown = value.trim().length > 60 ? `${value.trim().slice(0, 57)}...` : value.trim();
    return { error: `"${path}" sets ${name} = ${shown}, not a plain string: the file is read as text, never run; write ${name} = "1.2.3" there, or set version under [tool.nodereg]` };
  }
  return { version: (literal[1] ?? literal[2]).trim(), file: path };
}

// ---------- reading ----------

/** Reads `DIR/pyproject.toml` and maps it; problems are collected, never thrown. */
export function readManifest(dir: string, options: ManifestOptions = {}): Manifest {
  const manifest: Manifest = {
    node: {}, nodeVersion: {}, license: undefined, includes: [], includesKey: T('includes'), excludes: [], problems: [], warnings: [], keys: new Map(),
  };
  const problem = (key: string, message: string) => manifest.problems.push({ key, message });
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problem(MANIFEST_FILE, code === 'ENOENT' ? `not found in ${dir}; create one with \`nodereg init\`` : `cannot be read: ${(error as Error).message}`);
    return manifest;
  }
  // Some Windows editors save "Unicode" as UTF-16, which TOML is not: its parser would only see an illegal character.
  if (/^(\ufffd\ufffd|[^\0]?\0)/.test(text)) {
    problem(MANIFEST_FILE, 'is UTF-16 text, and TOML is UTF-8: save it again as UTF-8');
    return manifest;
  }
  let doc: Table;
  try {
    doc = parse(text, TOML_OPTIONS) as Table;
  } catch (error) {
    const where = error instanceof TomlError ? ` (line ${error.line}, column ${error.column})` : '';
    problem(MANIFEST_FILE, `is not valid TOML${where}: ${(error as Error).message.split('\n')[0]}`);
    return manifest;
  }
  mapManifest(doc, manifest, { ...options, dir });
  return manifest;
}

/**
 * TOML integers are 64-bit: one past 2^53 (a seed, an id in some other tool's table) is read as a
 * BigInt rather than refused, so a valid pyproject.toml is never called invalid TOML.
 */
export const TOML_OPTIONS = { integersAsBigInt: 'asNeeded' } as const;

/** Maps a parsed pyproject.toml into `manifest` (exported for tests that start from a table). */
export function mapManifest(doc: Table, manifest: Manifest, options: ManifestOptions = {}): void {
  const problem = (key: string, message: string) => manifest.problems.push({ key, message });
  const { node, nodeVersion, keys } = manifest;

  const project = doc.project;
  if (project !== undefined && !isTable(project)) problem('[project]', 'must be a table');
  const proj: Table = isTable(project) ? project : {};
  const toolTable = isTable(doc.tool) ? doc.tool.nodereg : undefined;
  if (toolTable !== undefined && !isTable(toolTable)) problem('[tool.nodereg]', 'must be a table');
  const tool: Table = isTable(toolTable) ? toolTable : {};
  const comfyTable = isTable(doc.tool) ? doc.tool.comfy : undefined;
  if (comfyTable !== undefined && !isTable(comfyTable)) problem('[tool.comfy]', 'must be a table');
  const comfy: Table = isTable(comfyTable) ? comfyTable : {};
  /** `[tool.nodereg] KEY`, else its `[tool.comfy]` counterpart ("" there means unset, as the incumbent reads it). */
  const setting = (key: string): { value: unknown; key: string } | undefined => {
    if (tool[key] !== undefined) return { value: tool[key], key: T(key) };
    const comfyKey = COMFY_KEYS[key];
    const value = comfyKey === undefined ? undefined : comfy[comfyKey];
    return value === undefined || value === '' ? undefined : { value, key: C(comfyKey) };
  };

  for (const key of Object.keys(tool)) {
    if (!TOOL_KEYS.includes(key)) {
      const near = TOOL_KEYS.find((k) => k.replace(/-/g, '') === key.replace(/[-_]/g, '').toLowerCase());
      manifest.warnings.push(`${T(key)} is not a key nodereg knows${near ? ` (did you mean ${near}?)` : ''}; it is ignored`);
    }
  }

  // publisher: --publisher wins, then [tool.nodereg] publisher, then [tool.comfy] PublisherId
  const fromTool = setting('publisher');
  const publisherKey = options.publisher !== undefined ? '--publisher' : (fromTool?.key ?? T('publisher'));
  const publisher = options.publisher ?? fromTool?.value;
  keys.set('publisher', publisherKey);
  if (publisher === undefined) {
    // The incumbent's `init` writes PublisherId = "": name the key the publisher has, not one to add.
    if (options.requirePublisher && comfy.PublisherId === '') problem(C('PublisherId'), 'is empty: set it to your publisher id (PublisherId = "your-publisher-id"), or pass --publisher');
    else if (options.requirePublisher) problem(T('publisher'), 'is missing: add publisher = "your-publisher-id" under [tool.nodereg] (or PublisherId under [tool.comfy]), or pass --publisher');
  } else if (typeof publisher !== 'string') {
    problem(publisherKey, 'must be a string');
  } else if (isPublisherId(publisher)) {
    manifest.publisherId = publisher;
  } else {
    problem(publisherKey, PUBLISHER_ID.message);
  }

  // node id: [project] name, checked with the contract's rule through node.id
  if (proj.name === undefined) problem(P('name'), 'is missing: add name = "my-node" under [project]');
  else if (typeof proj.name !== 'string') problem(P('name'), 'must be a string');
  else {
    manifest.nodeId = proj.name;
    node.id = proj.name;
  }
  keys.set('node.id', P('name'));

  // version: [tool.nodereg] version, else [project] version, converted to semver
  const dynamic = proj.dynamic;
  if (dynamic !== undefined && !isStringArray(dynamic)) problem(P('dynamic'), 'must be an array of strings');
  const isDynamic = isStringArray(dynamic) && dynamic.includes('version');
  let versionKey = T('version');
  if (tool.version !== undefined) {
    if (typeof tool.version !== 'string') problem(T('version'), 'must be a string such as "1.2.3"');
    else takeVersion(versionToSemver(tool.version), T('version'));
  } else if (isDynamic && isTable(comfy.version)) {
    versionKey = '[tool.comfy.version] path';
    const found = versionFromFile(comfy.version.path, options.dir);
    if ('error' in found) problem(versionKey, found.error);
    else takeVersion(versionToSemver(found.version), `${versionKey} (${found.file})`);
  } else if (isDynamic) {
    problem(P('version'), 'is dynamic, so nodereg cannot know it: add version = "1.2.3" under [tool.nodereg]');
  } else if (proj.version === undefined) {
    problem(P('version'), 'is missing: add version = "1.2.3" under [project]');
  } else if (typeof proj.version !== 'string') {
    versionKey = P('version');
    problem(P('version'), 'must be a string such as "1.2.3"');
  } else {
    versionKey = P('version');
    takeVersion(versionToSemver(proj.version), P('version'));
  }
  keys.set('node_version.version', versionKey);

  function takeVersion(result: VersionResult, key: string) {
    if ('error' in result) problem(key, result.error);
    else {
      if (result.note) manifest.warnings.push(`${key} ${result.note}`);
      manifest.version = result.version;
      nodeVersion.version = result.version;
    }
  }

  setIfPresent(node, 'description', proj.description, 'node.description', P('description'));
  // Not required (the registry keeps a node's description when none is sent), but a new node without one is bare in search.
  if (proj.description === undefined || (typeof proj.description === 'string' && !proj.description.trim())) {
    const effect = proj.description === undefined ? 'is not set: a new node has no description in search and on its page (a published one keeps its own)' : 'is empty: the node shows no description in search and on its page';
    manifest.warnings.push(`${P('description')} ${effect}; add description = "what the node does" to [project]`);
  }

  // author: the first of [project] authors (its name, else its email)
  if (proj.authors !== undefined) {
    const first = Array.isArray(proj.authors) ? proj.authors[0] : undefined;
    if (!Array.isArray(proj.authors) || (first !== undefined && !isTable(first))) {
      problem(P('authors'), 'must be an array of tables such as [{ name = "Ada" }]');
    } else if (first !== undefined) {
      const author = first.name ?? first.email;
      if (author !== undefined) setIfPresent(node, 'author', author, 'node.author', P('authors'));
    }
  }

  // license: a file table, or a string resolved later against the file set
  const license = proj.license;
  const licenseFiles = proj['license-files'];
  if (licenseFiles !== undefined && !isStringArray(licenseFiles)) problem(P('license-files'), 'must be an array of paths or patterns');
  if (typeof license === 'string') {
    manifest.license = { kind: 'spdx', value: license, files: isStringArray(licenseFiles) ? licenseFiles : [] };
  } else if (isTable(license) && typeof license.file === 'string') {
    manifest.license = { kind: 'file', path: license.file.replace(/^\.\//, '') };
  } else if (isTable(license) && typeof license.text === 'string') {
    manifest.license = { kind: 'spdx', value: license.text, files: isStringArray(licenseFiles) ? licenseFiles : [] };
  } else if (license !== undefined) {
    problem(P('license'), 'must be an SPDX expression such as "MIT", or a table such as { file = "LICENSE" }');
  } else if (isStringArray(licenseFiles) && licenseFiles.length) {
    manifest.license = { kind: 'spdx', value: '', files: licenseFiles };
  }
  if (manifest.license) keys.set('node.license', P('license'));

  // repository: [project.urls] Repository, else Source, else Homepage (labels compared as PEP 753 normalises them)
  if (proj.urls !== undefined) {
    if (!isTable(proj.urls)) problem('[project.urls]', 'must be a table of labels to URLs');
    else {
      const byLabel = new Map<string, [string, unknown]>();
      for (const [label, url] of Object.entries(proj.urls)) byLabel.set(label.toLowerCase().replace(/[^a-z0-9]/g, ''), [label, url]);
      const found = ['repository', 'source', 'sourcecode', 'homepage'].map((l) => byLabel.get(l)).find(Boolean);
      if (found) setIfPresent(node, 'repository', found[1], 'node.repository', `[project.urls] ${found[0]}`);
    }
  }

  // The frontend requirement, as the incumbent reads it: a dependency on the host's frontend package,
  // which it then leaves out of the dependencies.
  let dependencies = proj.dependencies;
  const frontendKey = fieldKey('supported_appui_frontend_version');
  if (tool[frontendKey] === undefined && isStringArray(dependencies)) {
    const match = dependencies.map((d) => FRONTEND_DEPENDENCY.exec(d)).find(Boolean);
    if (match) {
      dependencies = dependencies.filter((d) => !FRONTEND_DEPENDENCY.test(d));
      const requirement = match[1].trim();
      const key = `${P('dependencies')} (${match[0].trim()})`;
      // checked as requires-comfyui is: a value the registry cannot compare with the frontend's version is not sent
      if (requirement && !isIncumbentRequirement(requirement)) manifest.warnings.push(notARequirement(key, requirement));
      else if (requirement) setBoth('supported_appui_frontend_version', requirement, key);
    }
  }
  setIfPresent(nodeVersion, 'dependencies', dependencies, 'node_version.dependencies', P('dependencies'));

  // The display name is sent only when set: the registry names a new node after its id, and a later
  // publish must not rename it.
  const displayName = setting('display-name');
  if (displayName) setIfPresent(node, 'name', displayName.value, 'node.name', displayName.key);

  for (const [key, field] of NODE_KEYS) {
    const found = setting(key);
    if (found?.key === C('requires-comfyui') && typeof found.value === 'string' && !isIncumbentRequirement(found.value)) {
      manifest.warnings.push(notARequirement(found.key, found.value));
    } else if (found) setBoth(field, found.value, found.key);
  }
  if (!node.supported_os || !node.supported_accelerators) mapClassifiers();

  const includes = setting('includes');
  if (includes) {
    manifest.includesKey = includes.key;
    keys.set('includes', includes.key);
    if (!isStringArray(includes.value)) problem(includes.key, 'must be an array of strings');
    else manifest.includes = includes.value;
  }
  if (tool.excludes !== undefined) {
    if (!isStringArray(tool.excludes)) problem(T('excludes'), 'must be an array of strings');
    else manifest.excludes = tool.excludes;
  }

  if (options.changelog !== undefined) {
    nodeVersion.changelog = options.changelog.text;
    keys.set('node_version.changelog', options.changelog.source);
  }

  function setIfPresent(target: Record<string, unknown>, field: string, value: unknown, path: string, key: string) {
    if (value === undefined) return;
    target[field] = value;
    keys.set(path, key);
  }

  /** A node field, also sent on the version when it says what the code supports. */
  function setBoth(field: string, value: unknown, key: string) {
    setIfPresent(node, field, value, `node.${field}`, key);
    if (onVersionToo(field)) setIfPresent(nodeVersion, field, value, `node_version.${field}`, key);
  }

  /**
   * `[project] classifiers` → supported_os and supported_accelerators where `[tool.nodereg]` sets
   * neither, as the incumbent maps them; an entry it would refuse is left out with a warning (the
   * incumbent drops the whole list).
   */
  function mapClassifiers() {
    const classifiers = proj.classifiers;
    if (classifiers === undefined) return;
    if (!isStringArray(classifiers)) return problem(P('classifiers'), 'must be an array of strings');
    const os: string[] = [];
    const accelerators: string[] = [];
    for (const classifier of classifiers) {
      if (classifier.startsWith(OS_CLASSIFIER)) {
        const value = classifier.slice(OS_CLASSIFIER.length);
        if (KNOWN_OS.some((prefix) => value.startsWith(prefix))) os.push(value);
        else manifest.warnings.push(`${P('classifiers')} "${classifier}" names no operating system the registry knows (it starts with one of ${KNOWN_OS.map((o) => `"${o}"`).join(', ')}); it is left out of supported_os`);
        continue;
      }
      const accelerator = ACCELERATOR_CLASSIFIER.exec(classifier)?.[1];
      if (accelerator === undefined) continue;
      if (KNOWN_ACCELERATORS.includes(accelerator)) accelerators.push(accelerator);
      else manifest.warnings.push(`${P('classifiers')} "${classifier}" names no accelerator the registry knows (${KNOWN_ACCELERATORS.map((a) => `"Environment :: ${a}"`).join(', ')}); it is left out of supported_accelerators`);
    }
    if (!node.supported_os && os.length) setBoth('supported_os', os, P('classifiers'));
    if (!node.supported_accelerators && accelerators.length) setBoth('supported_accelerators', accelerators, P('classifiers'));
  }
}

// ---------- the request ----------

export interface PublishRequest {
  publisherId?: string;
  nodeId: string;
  version: string;
  /** The body of POST /publishers/{p}/nodes/{n}/versions, as the contract parsed it. It never holds a token. */
  body: Omit<z.output<typeof PublishBody>, 'personal_access_token'>;
}

/**
 * Validates the request built from the manifest with the contract's PublishBody, adding each
 * problem under the pyproject key that sets the field. Returns the request when there is none.
 */
export async function buildRequest(manifest: Manifest): Promise<PublishRequest | undefined> {
  const candidate = { node: { ...manifest.node }, node_version: { ...manifest.nodeVersion } };
  // A missing version is reported already; a placeholder keeps the other fields' checks going.
  if (candidate.node_version.version === undefined) candidate.node_version.version = '0.0.0';
  let body = checkRequest<PublishRequest['body']>('PublishBody', candidate);
  if (body === undefined) {
    // The generated check refused it (or could not tell): zod's parse, with its problems in its words.
    const { PublishBody } = await import('../contract/resources.js');
    const parsed = PublishBody.safeParse(candidate);
    if (parsed.success) body = parsed.data as PublishRequest['body'];
    for (const issue of parsed.error?.issues ?? []) {
      const path = issue.path.map(String);
      const key = keyFor(manifest.keys, path);
      const rest = path.slice(2).map((part) => (/^\d+$/.test(part) ? `item ${Number(part) + 1}` : part));
      const field = rest.length ? ` (${rest.join(', ')})` : '';
      addProblem(manifest, key, `${issue.message}${field}`);
    }
  }
  if (manifest.problems.length || !body || !manifest.nodeId || !manifest.version) return undefined;
  return { publisherId: manifest.publisherId, nodeId: manifest.nodeId, version: body.node_version.version, body };
}

/** The key for a request path: the longest mapped prefix (`node.tags.2` → `[tool.nodereg] tags`). */
function keyFor(keys: Map<string, string>, path: string[]): string {
  for (let n = path.length; n > 0; n--) {
    const key = keys.get(path.slice(0, n).join('.'));
    if (key) return key;
  }
  return path.join('.');
}

/** Adds a problem once: a supported-* key checked on the node and on the version is reported once. */
export function addProblem(manifest: Manifest, key: string, message: string): void {
  if (!manifest.problems.some((p) => p.key === key && p.message === message)) manifest.problems.push({ key, message });
}

export function formatProblems(problems: Problem[]): string {
  return problems.map((p) => `  ${p.key}: ${p.message}`).join('\n');
}
