// The manifest's shapes, and the helpers every mapping step shares.
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

export const P = (key: string) => `[project] ${key}`;
export const T = (key: string) => `[tool.nodereg] ${key}`;
export const C = (key: string) => `[tool.comfy] ${key}`;

export type Table = Record<string, unknown>;
export const isTable = (value: unknown): value is Table =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
export const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');
