// DESIGN.md §1: `contract/` imports nothing of ours; `shared/` imports nothing of ours but contract types.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = resolve(import.meta.dirname, '../../src');
const IMPORT = /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'(\.[^']*)'|import\(\s*'(\.[^']*)'\s*\)/gm;

/** Every relative import of the .ts files under `dir`: the file, the module it names resolved, and whether it is a type import. */
function relativeImports(dir: string): { file: string; target: string; typeOnly: boolean }[] {
  const found = [];
  for (const name of readdirSync(join(src, dir), { recursive: true }) as string[]) {
    if (!name.endsWith('.ts')) continue;
    const file = join(src, dir, name);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = match[3] ?? match[4];
      found.push({ file: `${dir}/${name}`, target: resolve(join(file, '..'), spec), typeOnly: match[2] !== undefined });
    }
  }
  return found;
}

describe('layers', () => {
  it('contract/ imports only its own modules', () => {
    const outside = relativeImports('contract').filter(({ target }) => !target.startsWith(join(src, 'contract')));
    expect(outside.map(({ file, target }) => `${file} → ${target}`)).toEqual([]);
  });

  it('shared/ imports only its own modules, and contract/ types', () => {
    const allowed = ({ target, typeOnly }: { target: string; typeOnly: boolean }) =>
      target.startsWith(join(src, 'shared')) || (typeOnly && target.startsWith(join(src, 'contract')));
    const outside = relativeImports('shared').filter((found) => !allowed(found));
    expect(outside.map(({ file, target }) => `${file} → ${target}`)).toEqual([]);
  });
});
