// pyproject.toml → the publish request, mapped as DESIGN.md §6's table says. The wire rules come from
// the contract's schemas; this file only knows where in pyproject.toml each request field comes from,
// so that every problem names the key to fix. `[tool.nodereg]` wins; where it lacks a key, the
// incumbent client's `[tool.comfy]` table and `[project] classifiers` are read as that client reads them.
// A valid manifest is checked without zod (contract/requests.ts); zod words the problems of one that is not.
// The steps live in manifest/: types, version, mapping (the tables), fields, requirements.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { checkRequest } from '../contract/requests.js';
import type { PublishBody } from '../contract/resources.js';
import { mapManifest } from './manifest/fields.js';
import { MANIFEST_FILE, type Manifest, type ManifestOptions, type Problem, T, type Table } from './manifest/types.js';

export { mapManifest } from './manifest/fields.js';
export type { ChangelogInput, LicenseSpec, Manifest, ManifestOptions, Problem } from './manifest/types.js';
export { MANIFEST_FILE } from './manifest/types.js';
export { pep440ToSemver, type VersionResult, versionToSemver } from './manifest/version.js';

// ---------- reading ----------

/** Reads `DIR/pyproject.toml` and maps it; problems are collected, never thrown. */
export function readManifest(dir: string, options: ManifestOptions = {}): Manifest {
  const manifest: Manifest = {
    node: {},
    nodeVersion: {},
    license: undefined,
    includes: [],
    includesKey: T('includes'),
    excludes: [],
    problems: [],
    warnings: [],
    keys: new Map(),
  };
  const problem = (key: string, message: string) => manifest.problems.push({ key, message });
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    problem(
      MANIFEST_FILE,
      code === 'ENOENT'
        ? `not found in ${dir}; create one with \`nodereg init\``
        : `cannot be read: ${(error as Error).message}`,
    );
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

// ---------- the request ----------

export interface PublishRequest {
  publisherId?: string;
  nodeId: string;
  version: string;
  /** The body of POST /publishers/{p}/nodes/{n}/versions, as the contract parsed it. It never holds a token. */
  body: Omit<z.output<typeof PublishBody>, 'personal_access_token'>;
}

/**
 * Checks the request built from the manifest with the generated check of the contract's PublishBody: what
 * it outputs is the body sent. A refused manifest gets each of its fields' problems (refusals.ts).
 * Returns the request when there is no problem.
 */
export async function buildRequest(manifest: Manifest): Promise<PublishRequest | undefined> {
  const candidate = { node: { ...manifest.node }, node_version: { ...manifest.nodeVersion } };
  // A missing version is reported already; a placeholder keeps the other fields' checks going.
  if (candidate.node_version.version === undefined) candidate.node_version.version = '0.0.0';
  // What is sent is JSON: a TOML date is sent as its text, and checked as such; a TOML integer past
  // JavaScript's safe range (a BigInt) as the number it is nearest.
  const sent = JSON.parse(JSON.stringify(candidate, (_, value) => (typeof value === 'bigint' ? Number(value) : value)));
  const body = checkRequest<PublishRequest['body']>('PublishBody', sent);
  if (body === undefined) await addRefusals(manifest, sent);
  if (manifest.problems.length || !body || !manifest.nodeId || !manifest.version) return undefined;
  return { publisherId: manifest.publisherId, nodeId: manifest.nodeId, version: body.node_version.version, body };
}

/** Problems listed from one refused manifest at most: each takes a check of its own. */
const MAX_REFUSALS = 50;

/**
 * Adds the problems of a body the check refused, each under the pyproject key that sets its field, in
 * the server's words: the check names its first problem, so the field is set aside and the rest checked
 * again, until it passes. One problem a field: the first a publisher fixes, then validate says the next.
 */
async function addRefusals(manifest: Manifest, body: Record<string, Record<string, unknown>>): Promise<void> {
  const { checkRequestPart } = await import('../contract/operation-checks.js');
  for (let listed = 0; listed < MAX_REFUSALS; listed++) {
    const checked = await checkRequestPart('publishVersion', 'body', body);
    if (!('refusal' in checked)) return;
    const path = checked.refusal.path.split('.');
    const rest = path.slice(2).map((part) => (/^\d+$/.test(part) ? `item ${Number(part) + 1}` : part));
    addProblem(
      manifest,
      keyFor(manifest.keys, path),
      `${checked.refusal.message}${rest.length ? ` (${rest.join(', ')})` : ''}`,
    );
    const [part, field] = path;
    // a refusal of no field, or of one set aside already (required): nothing more can be told apart
    if (field === undefined || !(field in (body[part] ?? {}))) return;
    delete body[part][field];
  }
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
