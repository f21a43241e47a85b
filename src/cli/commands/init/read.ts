import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { TOML_OPTIONS } from '../../../package/manifest.js';
import { invalidInput } from '../../errors.js';

/** The pyproject.toml init starts from: empty when there is none yet. */
export interface Pyproject {
  file: string;
  exists: boolean;
  original: string;
  doc: Record<string, any>;
  project: Record<string, unknown>;
  tool: Record<string, unknown>;
  /** The incumbent's table: what it sets is read by nodereg as it is, so init neither asks for it nor copies it. */
  comfy: Record<string, unknown>;
  versionIsDynamic: boolean;
}

// the manifest's reading of TOML, so what init checks is what validate and pack will read
export const parseToml = (text: string): Record<string, any> => parse(text, TOML_OPTIONS);
export const stringifyToml = stringify;

export function readPyproject(dir: string): Pyproject {
  const file = join(dir, 'pyproject.toml');
  const exists = existsSync(file);
  const original = exists ? readFileSync(file, 'utf8') : '';
  let doc: Record<string, any> = {};
  try {
    doc = parseToml(original);
  } catch (error) {
    throw invalidInput(
      `${file} is not valid TOML: ${(error as Error).message.split('\n')[0]}`,
      'fix it by hand, then run `nodereg init` again',
    );
  }
  const project: Record<string, unknown> = doc.project ?? {};
  return {
    file,
    exists,
    original,
    doc,
    project,
    tool: doc.tool?.nodereg ?? {},
    comfy: doc.tool?.comfy ?? {},
    versionIsDynamic: Array.isArray(project.dynamic) && project.dynamic.includes('version'),
  };
}

/** Reads a key of [tool.comfy], noting it in `adopted` for the report when it is set. */
export function comfyReader(comfy: Record<string, unknown>) {
  const adopted: string[] = [];
  const fromComfy = (key: string) => {
    const value = comfy[key];
    if (typeof value !== 'string' || value === '') return undefined;
    adopted.push(`[tool.comfy] ${key}`);
    return value;
  };
  return { adopted, fromComfy };
}
