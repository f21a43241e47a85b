// What validate, pack and publish share: reading the changelog flags, loading and checking the
// project (every problem at once, exit 2), and building the archive with errors in plain words.
// The packer is imported only when a command runs, never for --help.
import { existsSync, fstatSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { formatSize } from '../contract/size.js';
import { parseSize } from '../shared/size.js';
import type { ChangelogInput, Problem } from '../package/manifest.js';
import type { Project, ProjectOptions } from '../package/project.js';
import type { ArchiveResult, Pool } from '../package/zip.js';
import type { Ctx } from './context.js';
import { CliError, EXIT, fileProblem, invalidInput } from './errors.js';
import { table } from './output.js';
import { exitForSignal } from './exit.js';

export interface ChangelogFlags {
  changelog?: string;
  changelogFile?: string;
}

/** `--changelog TEXT`, `--changelog-file FILE` (`-` is stdin), else `NODEREG_CHANGELOG`. */
/** The changelog of --changelog, else of NODEREG_CHANGELOG; undefined when none is given. */
export async function readChangelog(ctx: Ctx, flags: ChangelogFlags): Promise<ChangelogInput | undefined> {
  if (flags.changelog !== undefined || flags.changelogFile !== undefined) return changelogOfFlags(ctx, flags);
  if (ctx.env.NODEREG_CHANGELOG) return { text: ctx.env.NODEREG_CHANGELOG, source: 'NODEREG_CHANGELOG' };
  return undefined;
}

/** The changelog that --changelog or --changelog-file (`-` for stdin) gives; undefined when neither is given. */
export async function changelogOfFlags(ctx: Ctx, flags: ChangelogFlags): Promise<ChangelogInput | undefined> {
  if (flags.changelog !== undefined && flags.changelogFile !== undefined) {
    throw invalidInput(
      '--changelog and --changelog-file cannot be used together',
      'pass the text with --changelog, or a file with --changelog-file',
    );
  }
  if (flags.changelog !== undefined) return { text: flags.changelog, source: '--changelog' };
  const file = flags.changelogFile;
  if (file === '-') {
    if (ctx.stdin.isTTY)
      throw invalidInput(
        '--changelog-file - reads the changelog from stdin, but nothing is piped in',
        'git log --oneline v1.0.0.. | nodereg publish --changelog-file -',
      );
    return { text: await ctx.readStdin(), source: '--changelog-file -' };
  }
  if (file !== undefined) {
    try {
      return { text: readFileSync(resolve(file), 'utf8'), source: `--changelog-file ${file}` };
    } catch (error) {
      throw invalidInput(
        `cannot read --changelog-file ${file}: ${fileProblem(error)}`,
        'give the path of a text file, or - to read it from stdin',
      );
    }
  }
  return undefined;
}

export function problemsError(dir: string | undefined, problems: Problem[]): CliError {
  const list = problems.map((p) => `  ${p.key}: ${p.message}`).join('\n');
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  const where = dir ? `the project in ${dir}` : 'the project'; // '' is the current directory too
  return new CliError(
    `${where} has ${count} to fix:\n${list}`,
    EXIT.invalid,
    'invalid_manifest',
    `fix ${problems.length === 1 ? 'it' : 'them'}, then check again with \`nodereg validate\``,
  );
}

/**
 * Loads the project in `dir`, prints its warnings, and fails with every problem at once: with those
 * `alsoProblems` finds in a project that has some (validate's scan findings).
 */
export async function loadChecked(
  ctx: Ctx,
  dir: string | undefined,
  options: ProjectOptions,
  alsoProblems?: (project: Project) => Promise<Problem[]>,
): Promise<Project & { request: NonNullable<Project['request']> }> {
  const [{ loadProject }, { MANIFEST_FILE }] = await Promise.all([
    import('../package/project.js'),
    import('../package/manifest.js'),
  ]);
  const root = projectDir(ctx, dir, MANIFEST_FILE);
  const kind = statSync(root, { throwIfNoEntry: false });
  if (!kind?.isDirectory()) {
    throw invalidInput(
      `${dir ?? '.'} ${kind ? 'is not a directory' : 'does not exist'}`,
      'give the directory of the node, the one that holds pyproject.toml',
    );
  }
  let project: Project;
  try {
    project = await loadProject(root, options);
  } catch (error) {
    throw invalidInput(`cannot read the project in ${root}: ${(error as Error).message}`);
  }
  leaveOutOwnOutput(ctx, project);
  for (const warning of project.warnings) ctx.out.warn(warning);
  if (project.problems.length || !project.request)
    throw problemsError(dir, [...project.problems, ...((await alsoProblems?.(project)) ?? [])]);
  return project as Project & { request: NonNullable<Project['request']> };
}

/**
 * The project's directory: `dir` when named, else here or the nearest one above (projectAbove), which
 * is said on stderr, with `also` after it.
 */
export function projectDir(ctx: Ctx, dir: string | undefined, manifestFile: string, also = ''): string {
  if (dir !== undefined) return resolve(dir);
  const root = projectAbove(resolve('.'), manifestFile);
  if (root !== resolve('.'))
    ctx.out.info(`using the project in ${root} (no ${manifestFile} here; the nearest one above)${also}`);
  return root;
}

/**
 * The directory of the project when none is named: here, else in a subdirectory of a git work tree
 * the nearest directory above with a pyproject.toml (as npm and cargo find their manifest), never
 * beyond the work tree's root: outside git a pyproject.toml above (in a home directory) is no node's.
 */
export function projectAbove(here: string, manifestFile: string): string {
  if (existsSync(join(here, manifestFile))) return here;
  let nearest: string | undefined;
  for (let dir = here; ; dir = dirname(dir)) {
    nearest ??= existsSync(join(dir, manifestFile)) ? dir : undefined;
    if (existsSync(join(dir, '.git'))) return nearest ?? here;
    if (dirname(dir) === dir) return here;
  }
}

/**
 * Leaves out a file this run's stdout or stderr is redirected into (`publish --json > result.json` in
 * the project, as a CI script writes it): it holds the run's own output, not a file of the node.
 */
function leaveOutOwnOutput(ctx: Ctx, project: Project): void {
  const outputs = [ctx.stdout, ctx.stderr].flatMap((stream) => {
    const fd = (stream as { fd?: unknown }).fd;
    const stat = typeof fd === 'number' ? fstatSync(fd) : undefined;
    return stat?.isFile() ? [stat] : [];
  });
  if (!outputs.length) return;
  project.files = project.files.filter((file) => {
    const stat = statSync(file.abs, { throwIfNoEntry: false });
    const own = stat !== undefined && outputs.some((output) => output.dev === stat.dev && output.ino === stat.ino);
    if (own)
      project.warnings.push(
        `${file.path} is left out: this run's output goes there (stdout or stderr is redirected into it)`,
      );
    return !own;
  });
}

export function parseMaxSize(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const size = parseSize(text);
  if (size === undefined || size <= 0)
    throw invalidInput(`--max-size "${text}" is not a size`, 'give bytes or a unit: 500kB, 200MiB, 1GiB');
  return size;
}

/** Warns about each Git LFS pointer that would ship (found by the packer, or by `findLfsPointers`), and keeps the warning with the project's. */
export async function warnAboutLfsPointers(ctx: Ctx, project: Project, paths: string[]): Promise<void> {
  if (!paths.length) return;
  const { lfsPointerWarning } = await import('../package/lfs.js');
  for (const warning of paths.map(lfsPointerWarning)) {
    project.warnings.push(warning);
    ctx.out.warn(warning);
  }
}

/**
 * Packs the project's files into `out`, turning the packer's failures into plain words, and warns about
 * the Git LFS pointers it packed. A big archive shows its progress on a terminal.
 */
export async function buildArchive(
  ctx: Ctx,
  project: Project,
  out: string,
  maxSize: number,
  pool?: Pool,
): Promise<ArchiveResult> {
  const { writeArchive, ArchiveTooLargeError, FileChangedError } = await import('../package/zip.js');
  const line = ctx.out.progress(500);
  try {
    const archive = await writeArchive(project.files, out, {
      maxSize,
      pool,
      onProgress: (bytes) => line.update(`packing: ${formatSize(bytes)} written`),
    });
    line.end();
    await warnAboutLfsPointers(ctx, project, archive.lfsPointers);
    return archive;
  } catch (error) {
    if (error instanceof ArchiveTooLargeError) {
      const largest = error.largest.map((f) => `  ${formatSize(f.size).padStart(10)}  ${f.path}`).join('\n');
      throw new CliError(
        `the archive is larger than --max-size (${maxSize.toLocaleString('en')} bytes); the largest files are:\n${largest}`,
        EXIT.invalid,
        'too_large',
        'leave files out with [tool.nodereg] excludes or a .noderegignore file, or raise --max-size',
      );
    }
    if (error instanceof FileChangedError) throw new CliError(error.message, EXIT.failure, 'file_changed');
    throw new CliError(`cannot pack: ${(error as Error).message}`, EXIT.failure, 'pack_failed');
  } finally {
    line.end();
  }
}

/** Lets a step of a task handle Ctrl-C itself (see withCleanup). */
export interface Interrupts {
  /**
   * Runs `step` with a signal that a SIGINT or SIGTERM aborts, instead of ending the process: the step
   * stops and says what it leaves behind. A second signal ends the process as usual.
   */
  caught<T>(step: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/**
 * Runs `task`, then `cleanup`, also when the user interrupts: on SIGINT or SIGTERM the temporary
 * files go first, `interrupted` says what was and was not done, and the process exits 130 or 143 —
 * except during a step run with `interrupts.caught`, which is aborted instead and ends with the same code.
 */
export async function withCleanup<T>(
  task: (interrupts: Interrupts) => Promise<T>,
  cleanup: () => void,
  interrupted?: (signal: NodeJS.Signals) => void,
): Promise<T> {
  let catching: AbortController | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (catching && !catching.signal.aborted) return catching.abort(signal);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    cleanup();
    interrupted?.(signal);
    exitForSignal(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const interrupts: Interrupts = {
    async caught(step) {
      catching = new AbortController();
      try {
        return await step(catching.signal);
      } finally {
        catching = undefined;
      }
    },
  };
  try {
    return await task(interrupts);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    cleanup();
  }
}

export interface ListedFile {
  path: string;
  size: number;
  /** In a git work tree: the file ships but is not committed. */
  untracked?: true;
}

/** The files of the archive as pack --list and publish --dry-run show them. */
export const listFiles = (project: Project): ListedFile[] =>
  project.files.map((f) =>
    f.untracked ? { path: f.path, size: f.size, untracked: true } : { path: f.path, size: f.size },
  );

/** The uncommitted files named in the warning; the rest are counted. */
const UNCOMMITTED_NAMED = 10;

/**
 * Names the files that ship but are not committed (a notes file, a local output): the incumbent client
 * packed only what git tracks, so a migrant does not expect them. Files `includes` brings in are meant.
 */
export function warnUncommitted(ctx: Ctx, project: Project): void {
  const loose = project.files.filter((f) => f.untracked && !f.included).map((f) => oneLine(f.path));
  // nothing tracked yet (no `git add`): the incumbent packed every file then too
  if (!loose.length || project.files.every((f) => f.untracked)) return;
  const more = loose.length > UNCOMMITTED_NAMED ? `, and ${loose.length - UNCOMMITTED_NAMED} more` : '';
  const count =
    loose.length === 1 ? '1 file that git does not track ships' : `${loose.length} files that git does not track ship`;
  ctx.out.warn(
    `${count} (the incumbent client packed only committed files): ${loose.slice(0, UNCOMMITTED_NAMED).join(', ')}${more}; commit ${loose.length === 1 ? 'it' : 'them'}, or ignore ${loose.length === 1 ? 'it' : 'them'} in .gitignore (\`nodereg pack --list\` marks each)`,
  );
}

/** One line per file: size, path, and "untracked" for a file git does not track. */
export const fileTable = (list: ListedFile[]): string =>
  table(list.map((f) => [formatSize(f.size).padStart(10), `${oneLine(f.path)}${f.untracked ? '  (untracked)' : ''}`]));

/** A file name on one line: a name with a line end (`x\n  4 B  pkg/y.py`) would show as two files. */
const oneLine = (name: string) => name.replace(/\n/g, '\\n');

/** `NodeVersionStatusActive` → `active`. */
export const statusWord = (status: string | undefined) =>
  (status ?? 'unknown').replace(/^NodeVersionStatus/, '').toLowerCase();
