// Versions as a manifest writes them (semver or PEP 440), and the incumbent's version file.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { formatSize } from '../../contract/size.js';
import { normalizeVersion } from '../../contract/version.js';

/** PEP 440, as the packaging specification writes it (case-insensitive, leading `v` allowed). */
const PEP440 = new RegExp(
  '^v?(?:(?<epoch>[0-9]+)!)?(?<release>[0-9]+(?:\\.[0-9]+)*)' +
    '(?<pre>[-_.]?(?<preL>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?<preN>[0-9]+)?)?' +
    '(?<post>-(?<postN1>[0-9]+)|[-_.]?(?<postL>post|rev|r)[-_.]?(?<postN2>[0-9]+)?)?' +
    '(?<dev>[-_.]?dev[-_.]?(?<devN>[0-9]+)?)?' +
    '(?:\\+(?<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?$',
  'i',
);
const PRE_LABEL: Record<string, string> = {
  a: 'alpha',
  alpha: 'alpha',
  b: 'beta',
  beta: 'beta',
  c: 'rc',
  rc: 'rc',
  pre: 'rc',
  preview: 'rc',
};

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
    const lower =
      next === core ? '' : ` (the next patch version: "${core}" would be lower, and may be published already)`;
    const pre =
      g.pre === undefined
        ? ''
        : `${{ alpha: 'a', beta: 'b', rc: 'rc' }[PRE_LABEL[g.preL.toLowerCase()]]}${Number(g.preN ?? 0)}`;
    return {
      error: `"${text}" has ${release.length} release numbers; a registry version has three (X.Y.Z): write "${next}${pre}"${lower}`,
    };
  }
  if (g.epoch !== undefined)
    return {
      error: `"${text}" has an epoch (${g.epoch}!), which a registry version cannot express: write "${core}" in [tool.nodereg] version`,
    };
  if (g.post !== undefined)
    return {
      error: `"${text}" is a post-release, which a registry version cannot express: publish the next patch version instead (e.g. "${bumpPatch(release)}")`,
    };
  if (g.dev !== undefined) {
    return {
      error: `"${text}" is a development release, which a registry version cannot express: use a pre-release such as "${core}a1" (published as ${core}-alpha.1), or set [tool.nodereg] version = "${core}-dev.${Number(g.devN ?? 0)}"`,
    };
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
  return direct.build === undefined
    ? { version: direct.version }
    : { version: direct.version, note: buildDropped(text, direct.build, direct.version) };
}

/** The largest file read for `__version__`. */
const VERSION_FILE_MAX = 1024 * 1024;

/** The first line that assigns `name` at its start (an annotation allowed): the name and what it assigns. */
const assignment = (name: '__version__' | 'VERSION') =>
  new RegExp(`^(${name})[ \\t]*(?::[^=\\n]+)?=(?!=)[ \\t]*([^\\n]*)`, 'm');
/**
 * A plain string literal and nothing after it but a comment: the file is read as text, never run, so
 * an f-string, a concatenation, a join or a call (`'.'.join(...)` would read as ".") is not a version.
 */
const PLAIN_STRING = /^(?:"([^"\\\n]*)"|'([^'\\\n]*)')[ \t]*(?:#.*)?$/;

/**
 * The incumbent's dynamic version: `[tool.comfy.version] path` names a file inside the project that
 * assigns the version; it is read as text, never run.
 */
export function versionFromFile(
  path: unknown,
  dir: string | undefined,
): { version: string; file: string } | { error: string } {
  if (typeof path !== 'string' || path === '')
    return { error: 'must name the file that sets __version__, e.g. path = "my_node/version.py"' };
  const root = resolve(dir ?? '.');
  const file = resolve(root, path);
  if (isAbsolute(path) || relative(root, file).startsWith('..'))
    return { error: `"${path}" must be a path inside the project` };
  let text: string;
  try {
    // What a symlink leads to must be inside too, and a regular file of a few lines: a FIFO would block the read forever.
    const real = realpathSync(file);
    if (relative(realpathSync(root), real).startsWith('..'))
      return { error: `"${path}" is a symlink that leads out of the project` };
    const stat = statSync(real);
    if (!stat.isFile()) return { error: `"${path}" is not a regular file` };
    if (stat.size > VERSION_FILE_MAX)
      return { error: `"${path}" is ${formatSize(stat.size)}; a file that sets __version__ is a few lines` };
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
    return {
      error: `"${path}" sets ${name} = ${shown}, not a plain string: the file is read as text, never run; write ${name} = "1.2.3" there, or set version under [tool.nodereg]`,
    };
  }
  return { version: (literal[1] ?? literal[2]).trim(), file: path };
}

/**
 * Where the version string of a version file (as versionFromFile reads it) is written: the offsets of
 * the text between its quotes, so that `version bump` replaces that and nothing else.
 */
export function versionLiteralSpan(text: string): { start: number; end: number } | undefined {
  const bom = text.startsWith('\ufeff') ? 1 : 0;
  const body = text.slice(bom);
  const match = assignment('__version__').exec(body) ?? assignment('VERSION').exec(body);
  if (!match) return undefined;
  const value = match[2];
  const literal = PLAIN_STRING.exec(value.trimEnd());
  if (!literal) return undefined;
  const inner = literal[1] ?? literal[2];
  const start = bom + match.index + match[0].length - value.length + 1 + (inner.length - inner.trimStart().length);
  return { start, end: start + inner.trim().length };
}
