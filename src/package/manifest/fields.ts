// pyproject.toml's keys → the request's fields, one step per field or group of fields.
import { isPublisherId, PUBLISHER_ID } from '../../contract/limits.js';
import { nodeWritable } from '../../contract/arguments.js';
import { fieldKey } from '../../shared/field-keys.js';
import { type Mapping, openTables, setBoth, setIfPresent, setting } from './mapping.js';
import { isIncumbentRequirement, mapClassifiers, mapDependencies, notARequirement } from './requirements.js';
import { C, isStringArray, isTable, type Manifest, type ManifestOptions, P, T, type Table } from './types.js';
import { type VersionResult, versionFromFile, versionToSemver } from './version.js';

/** Node fields that [project] sets (mapped below as PEP 621 defines its keys). */
const FROM_PROJECT = new Set(['name', 'description', 'author', 'license', 'repository']);
/**
 * `[tool.nodereg]` keys → request fields: every other node field a member writes, except deprecated
 * ones and objects. The supported-* ones say what the code supports: they are sent on the node and
 * the version.
 */
const NODE_KEYS = new Map(
  nodeWritable
    .filter(({ field, type, deprecated }) => !FROM_PROJECT.has(field) && !deprecated && type !== 'record')
    .map(({ field }) => [fieldKey(field), field]),
);
const TOOL_KEYS = ['publisher', 'version', 'display-name', 'includes', 'excludes', ...NODE_KEYS.keys()];

/** Maps a parsed pyproject.toml into `manifest` (exported for tests that start from a table). */
export function mapManifest(doc: Table, manifest: Manifest, options: ManifestOptions = {}): void {
  const m = openTables(doc, manifest, options);
  warnUnknownKeys(m);
  mapPublisher(m);
  mapName(m);
  mapVersion(m);
  mapDescription(m);
  mapAuthor(m);
  mapLicense(m);
  mapRepository(m);
  mapDependencies(m);
  mapToolKeys(m);
  if (!manifest.node.supported_os || !manifest.node.supported_accelerators) mapClassifiers(m);
  mapFileKeys(m);
  if (options.changelog !== undefined) {
    manifest.nodeVersion.changelog = options.changelog.text;
    manifest.keys.set('node_version.changelog', options.changelog.source);
  }
}

function warnUnknownKeys({ tool, manifest }: Mapping): void {
  for (const key of Object.keys(tool)) {
    if (!TOOL_KEYS.includes(key)) {
      const near = TOOL_KEYS.find((k) => k.replace(/-/g, '') === key.replace(/[-_]/g, '').toLowerCase());
      manifest.warnings.push(
        `${T(key)} is not a key nodereg knows${near ? ` (did you mean ${near}?)` : ''}; it is ignored`,
      );
    }
  }
}

/** publisher: --publisher wins, then [tool.nodereg] publisher, then [tool.comfy] PublisherId */
function mapPublisher(m: Mapping): void {
  const { options, comfy, manifest, problem } = m;
  const fromTool = setting(m, 'publisher');
  const publisherKey = options.publisher !== undefined ? '--publisher' : (fromTool?.key ?? T('publisher'));
  const publisher = options.publisher ?? fromTool?.value;
  manifest.keys.set('publisher', publisherKey);
  if (publisher === undefined) {
    // The incumbent's `init` writes PublisherId = "": name the key the publisher has, not one to add.
    if (options.requirePublisher && comfy.PublisherId === '')
      problem(
        C('PublisherId'),
        'is empty: set it to your publisher id (PublisherId = "your-publisher-id"), or pass --publisher',
      );
    else if (options.requirePublisher)
      problem(
        T('publisher'),
        'is missing: add publisher = "your-publisher-id" under [tool.nodereg] (or PublisherId under [tool.comfy]), or pass --publisher',
      );
  } else if (typeof publisher !== 'string') {
    problem(publisherKey, 'must be a string');
  } else if (isPublisherId(publisher)) {
    manifest.publisherId = publisher;
  } else {
    problem(publisherKey, PUBLISHER_ID.message);
  }
}

/** node id: [project] name, checked with the contract's rule through node.id */
function mapName({ proj, manifest, problem }: Mapping): void {
  if (proj.name === undefined) problem(P('name'), 'is missing: add name = "my-node" under [project]');
  else if (typeof proj.name !== 'string') problem(P('name'), 'must be a string');
  else {
    manifest.nodeId = proj.name;
    manifest.node.id = proj.name;
  }
  manifest.keys.set('node.id', P('name'));
}

/** version: [tool.nodereg] version, else [project] version, converted to semver */
function mapVersion(m: Mapping): void {
  const { proj, tool, comfy, options, problem } = m;
  const dynamic = proj.dynamic;
  if (dynamic !== undefined && !isStringArray(dynamic)) problem(P('dynamic'), 'must be an array of strings');
  const isDynamic = isStringArray(dynamic) && dynamic.includes('version');
  let versionKey = T('version');
  if (tool.version !== undefined) {
    if (typeof tool.version !== 'string') problem(T('version'), 'must be a string such as "1.2.3"');
    else takeVersion(m, versionToSemver(tool.version), T('version'));
  } else if (isDynamic && isTable(comfy.version)) {
    versionKey = '[tool.comfy.version] path';
    const found = versionFromFile(comfy.version.path, options.dir);
    if ('error' in found) problem(versionKey, found.error);
    else takeVersion(m, versionToSemver(found.version), `${versionKey} (${found.file})`);
  } else if (isDynamic) {
    problem(P('version'), 'is dynamic, so nodereg cannot know it: add version = "1.2.3" under [tool.nodereg]');
  } else if (proj.version === undefined) {
    problem(P('version'), 'is missing: add version = "1.2.3" under [project]');
  } else if (typeof proj.version !== 'string') {
    versionKey = P('version');
    problem(P('version'), 'must be a string such as "1.2.3"');
  } else {
    versionKey = P('version');
    takeVersion(m, versionToSemver(proj.version), P('version'));
  }
  m.manifest.keys.set('node_version.version', versionKey);
}

function takeVersion({ manifest, problem }: Mapping, result: VersionResult, key: string): void {
  if ('error' in result) problem(key, result.error);
  else {
    if (result.note) manifest.warnings.push(`${key} ${result.note}`);
    manifest.version = result.version;
    manifest.nodeVersion.version = result.version;
  }
}

function mapDescription(m: Mapping): void {
  const { proj, manifest } = m;
  setIfPresent(m, manifest.node, 'description', proj.description, 'node.description', P('description'));
  // Not required (the registry keeps a node's description when none is sent), but a new node without one is bare in search.
  if (proj.description === undefined || (typeof proj.description === 'string' && !proj.description.trim())) {
    const effect =
      proj.description === undefined
        ? 'is not set: a new node has no description in search and on its page (a published one keeps its own)'
        : 'is empty: the node shows no description in search and on its page';
    manifest.warnings.push(`${P('description')} ${effect}; add description = "what the node does" to [project]`);
  }
}

/** author: the first of [project] authors (its name, else its email) */
function mapAuthor(m: Mapping): void {
  const { proj } = m;
  if (proj.authors === undefined) return;
  const first = Array.isArray(proj.authors) ? proj.authors[0] : undefined;
  if (!Array.isArray(proj.authors) || (first !== undefined && !isTable(first))) {
    m.problem(P('authors'), 'must be an array of tables such as [{ name = "Ada" }]');
  } else if (first !== undefined) {
    const author = first.name ?? first.email;
    if (author !== undefined) setIfPresent(m, m.manifest.node, 'author', author, 'node.author', P('authors'));
  }
}

/** license: a file table, or a string resolved later against the file set */
function mapLicense({ proj, manifest, problem }: Mapping): void {
  const license = proj.license;
  const licenseFiles = proj['license-files'];
  if (licenseFiles !== undefined && !isStringArray(licenseFiles))
    problem(P('license-files'), 'must be an array of paths or patterns');
  const files = isStringArray(licenseFiles) ? licenseFiles : [];
  if (typeof license === 'string') {
    manifest.license = { kind: 'spdx', value: license, files };
  } else if (isTable(license) && typeof license.file === 'string') {
    manifest.license = { kind: 'file', path: license.file.replace(/^\.\//, '') };
  } else if (isTable(license) && typeof license.text === 'string') {
    manifest.license = { kind: 'spdx', value: license.text, files };
  } else if (license !== undefined) {
    problem(P('license'), 'must be an SPDX expression such as "MIT", or a table such as { file = "LICENSE" }');
  } else if (files.length) {
    manifest.license = { kind: 'spdx', value: '', files };
  }
  if (manifest.license) manifest.keys.set('node.license', P('license'));
}

/** repository: [project.urls] Repository, else Source, else Homepage (labels compared as PEP 753 normalises them) */
function mapRepository(m: Mapping): void {
  const { proj } = m;
  if (proj.urls === undefined) return;
  if (!isTable(proj.urls)) return m.problem('[project.urls]', 'must be a table of labels to URLs');
  const byLabel = new Map<string, [string, unknown]>();
  for (const [label, url] of Object.entries(proj.urls))
    byLabel.set(label.toLowerCase().replace(/[^a-z0-9]/g, ''), [label, url]);
  const found = ['repository', 'source', 'sourcecode', 'homepage'].map((l) => byLabel.get(l)).find(Boolean);
  if (found) setIfPresent(m, m.manifest.node, 'repository', found[1], 'node.repository', `[project.urls] ${found[0]}`);
}

/** The display name and every node field `[tool.nodereg]` (or `[tool.comfy]`) sets. */
function mapToolKeys(m: Mapping): void {
  const { manifest } = m;
  // The display name is sent only when set: the registry names a new node after its id, and a later
  // publish must not rename it.
  const displayName = setting(m, 'display-name');
  if (displayName) setIfPresent(m, manifest.node, 'name', displayName.value, 'node.name', displayName.key);
  for (const [key, field] of NODE_KEYS) {
    const found = setting(m, key);
    if (
      found?.key === C('requires-comfyui') &&
      typeof found.value === 'string' &&
      !isIncumbentRequirement(found.value)
    ) {
      manifest.warnings.push(notARequirement(found.key, found.value));
    } else if (found) setBoth(m, field, found.value, found.key);
  }
}

/** includes and excludes: the patterns the file set is chosen with. */
function mapFileKeys(m: Mapping): void {
  const { manifest, tool, problem } = m;
  const includes = setting(m, 'includes');
  if (includes) {
    manifest.includesKey = includes.key;
    manifest.keys.set('includes', includes.key);
    if (!isStringArray(includes.value)) problem(includes.key, 'must be an array of strings');
    else manifest.includes = includes.value;
  }
  if (tool.excludes !== undefined) {
    if (!isStringArray(tool.excludes)) problem(T('excludes'), 'must be an array of strings');
    else manifest.excludes = tool.excludes;
  }
}
