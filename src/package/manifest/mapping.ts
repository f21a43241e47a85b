// What every step of mapping pyproject.toml shares: the three tables, where a setting is read from,
// and how a value is set with the key that set it.
import { C, isTable, type Manifest, type ManifestOptions, T, type Table } from './types.js';

/** `[tool.nodereg]` keys → the incumbent's `[tool.comfy]` keys, read when ours is not set. */
const COMFY_KEYS: Record<string, string> = {
  publisher: 'PublisherId',
  'display-name': 'DisplayName',
  icon: 'Icon',
  'banner-url': 'Banner',
  includes: 'includes',
  'requires-app': 'requires-comfyui',
};

const onVersionToo = (field: string) => field.startsWith('supported_');

export interface Mapping {
  manifest: Manifest;
  options: ManifestOptions;
  /** `[project]`, `[tool.nodereg]` and `[tool.comfy]`; an empty table where one is missing or not a table. */
  proj: Table;
  tool: Table;
  comfy: Table;
  problem: (key: string, message: string) => void;
}

/** The tables of a parsed pyproject.toml, with a problem for each that is set but not a table. */
export function openTables(doc: Table, manifest: Manifest, options: ManifestOptions): Mapping {
  const problem = (key: string, message: string) => {
    manifest.problems.push({ key, message });
  };
  const project = doc.project;
  if (project !== undefined && !isTable(project)) problem('[project]', 'must be a table');
  const toolTable = isTable(doc.tool) ? doc.tool.nodereg : undefined;
  if (toolTable !== undefined && !isTable(toolTable)) problem('[tool.nodereg]', 'must be a table');
  const comfyTable = isTable(doc.tool) ? doc.tool.comfy : undefined;
  if (comfyTable !== undefined && !isTable(comfyTable)) problem('[tool.comfy]', 'must be a table');
  return {
    manifest,
    options,
    proj: isTable(project) ? project : {},
    tool: isTable(toolTable) ? toolTable : {},
    comfy: isTable(comfyTable) ? comfyTable : {},
    problem,
  };
}

/** `[tool.nodereg] KEY`, else its `[tool.comfy]` counterpart ("" there means unset, as the incumbent reads it). */
export function setting(m: Mapping, key: string): { value: unknown; key: string } | undefined {
  if (m.tool[key] !== undefined) return { value: m.tool[key], key: T(key) };
  const comfyKey = COMFY_KEYS[key];
  const value = comfyKey === undefined ? undefined : m.comfy[comfyKey];
  return value === undefined || value === '' ? undefined : { value, key: C(comfyKey) };
}

export function setIfPresent(
  m: Mapping,
  target: Record<string, unknown>,
  field: string,
  value: unknown,
  path: string,
  key: string,
): void {
  if (value === undefined) return;
  target[field] = value;
  m.manifest.keys.set(path, key);
}

/** A node field, also sent on the version when it says what the code supports. */
export function setBoth(m: Mapping, field: string, value: unknown, key: string): void {
  const { node, nodeVersion } = m.manifest;
  setIfPresent(m, node, field, value, `node.${field}`, key);
  if (onVersionToo(field)) setIfPresent(m, nodeVersion, field, value, `node_version.${field}`, key);
}
