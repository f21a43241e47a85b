// The nodes of a repository that holds several (a monorepo): `--all` finds every pyproject.toml with
// a node manifest ([tool.nodereg] or [tool.comfy]) below a root, as publish, validate, pack and scan take them.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { Option } from 'commander';
import { invalidInput } from './errors.js';

/** Read here without importing the manifest's module, which only --all needs (every command declares the flag). */
const MANIFEST_FILE = 'pyproject.toml';

/** Directories never searched: installed packages, git's own, caches; a virtualenv is told by its pyvenv.cfg. */
const SKIPPED = new Set(['node_modules', '.git', '__pycache__', '.venv', 'venv', '.tox', '.nox']);

type TomlParse = (text: string) => unknown;

/** Whether the pyproject.toml in `dir` declares a node (a plain Python package beside the nodes does not). */
function hasNodeManifest(dir: string, parse: TomlParse): boolean {
  try {
    const tool = (parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as { tool?: object }).tool;
    return Boolean(tool && ('nodereg' in tool || 'comfy' in tool));
  } catch {
    // A manifest that does not parse is a node's all the same: its own check names what is wrong.
    return true;
  }
}

/** Whether a path (relative to the root) goes through a directory no search enters. */
function skipped(root: string, path: string): boolean {
  const parts = path.split(/[\\/]/).slice(0, -1);
  return parts.some((part, i) => SKIPPED.has(part) || existsSync(join(root, ...parts.slice(0, i + 1), 'pyvenv.cfg')));
}

/** The pyproject.toml files git lists below `root` (tracked, or untracked and not ignored); undefined outside a work tree. */
function gitManifests(root: string): string[] | undefined {
  const run = spawnSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', `:(glob)**/${MANIFEST_FILE}`],
    { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  if (run.error || run.status !== 0) return undefined;
  return [...new Set(run.stdout.split('\0').filter(Boolean))];
}

/** Outside git: every pyproject.toml below `root`, by walking it. */
function walkManifests(root: string, below = ''): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, below), { withFileTypes: true })) {
    const path = below ? `${below}/${entry.name}` : entry.name;
    if (entry.isFile() && entry.name === MANIFEST_FILE) found.push(path);
    else if (entry.isDirectory() && !SKIPPED.has(entry.name) && !existsSync(join(root, path, 'pyvenv.cfg')))
      found.push(...walkManifests(root, path));
  }
  return found;
}

/** The node directories below `root`, by path, the root's own first; an error when there is none. */
export function findNodeDirs(root: string, parse: TomlParse): string[] {
  const base = resolve(root);
  if (!existsSync(base)) throw invalidInput(`--all: ${root} does not exist`, 'give the directory the nodes are below');
  const manifests = (gitManifests(base) ?? walkManifests(base))
    .filter((path) => !skipped(base, path))
    .map((path) => dirname(join(base, path)))
    .filter((dir) => hasNodeManifest(dir, parse))
    .sort((a, b) => (a === base ? -1 : b === base ? 1 : a.localeCompare(b)));
  if (!manifests.length)
    throw invalidInput(
      `--all found no ${MANIFEST_FILE} with [tool.nodereg] or [tool.comfy] below ${base} (node_modules, virtualenvs and what git ignores are not searched)`,
      'give the node directories instead, or add a [tool.nodereg] table to one (nodereg init, on a terminal, asks for it)',
    );
  return manifests;
}

/** The directories a command of many nodes runs on: those given, or with --all every node below them (or below the current directory). */
export async function nodeDirs(dirs: string[], all: boolean | undefined): Promise<string[]> {
  if (!all) return dirs.length ? dirs : ['.'];
  const [{ parse }, { TOML_OPTIONS }] = await Promise.all([import('smol-toml'), import('../package/manifest.js')]);
  const found = (dirs.length ? dirs : ['.']).flatMap((dir) => findNodeDirs(dir, (text) => parse(text, TOML_OPTIONS)));
  return [...new Set(found)].map((dir) => relative('.', dir) || '.').map((dir) => dir.split(sep).join('/'));
}

/** The flag of the commands that take many nodes. */
export interface ManyFlags {
  all?: boolean;
}

/** --all, as publish, validate, pack and scan declare it. */
export const allOption = () =>
  new Option(
    '--all',
    `every node below the dirs given (default: the current directory): each ${MANIFEST_FILE} with [tool.nodereg] or [tool.comfy], except in node_modules, virtualenvs and what git ignores`,
  );
