// publish refuses to ship files that differ from the commit (HEAD): what the registry gets would be
// in no commit, so nobody could find its source again. --allow-dirty publishes them as they are.
// Outside git, or before the first commit, there is nothing to compare with and no guard.
import type { Project } from '../../package/project.js';
import { DEFAULT_SCAN_FAIL_ON } from '../../shared/scan.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { changedFiles, changedList } from '../git.js';
import { shellWord } from '../invocation.js';
import type { PublishOptions } from './options.js';

/** Fails, naming them, when files that ship (or tracked ones deleted) differ from HEAD; unless --allow-dirty. */
export function refuseDirtyTree(ctx: Ctx, project: Project, dir: string | undefined, options: PublishOptions): void {
  if (options.allowDirty) return;
  const changed = changedFiles(project.dir);
  if (!changed?.length) return;
  const shipped = new Set(project.files.map((f) => f.path));
  const dirty = changed.filter((f) => f.status === 'D' || shipped.has(f.path));
  if (!dirty.length) return;
  const count = dirty.length === 1 ? '1 file differs' : `${dirty.length} files differ`;
  throw new CliError(
    `${count} from the last commit (HEAD), so the archive would hold what no commit does: ${changedList(dirty)}`,
    EXIT.invalid,
    'dirty_tree',
    `commit ${dirty.length === 1 ? 'it' : 'them'} (or \`git stash\`) and publish again; to publish the files as they are, run \`${publishCommand(ctx, dir, options, '--allow-dirty')}\``,
  );
}

/** This publish command as the user gave it (its nodes, the options that change what it does), with `extra`. */
export function publishCommand(ctx: Ctx, dir: string | undefined, options: PublishOptions, extra: string): string {
  const words = ['nodereg', 'publish'];
  const nodes = options.commandNodes ?? (dir ? [dir] : []);
  for (const node of nodes) words.push(node === '--all' ? node : shellWord(node));
  const { registry, profile } = ctx.globals();
  const valued: [string, string | undefined][] = [
    ['--registry', registry],
    ['--profile', profile],
    ['--publisher', options.publisher],
    ['--changelog', options.changelog],
    ['--changelog-file', options.changelogFile],
    ['--max-size', options.maxSize],
    ['--fail-on', options.failOn === DEFAULT_SCAN_FAIL_ON ? undefined : options.failOn],
  ];
  for (const [flag, value] of valued) if (value !== undefined) words.push(flag, shellWord(value));
  const flags: [string, boolean | undefined][] = [
    ['--dry-run', options.dryRun],
    ['--skip-existing', options.skipExisting],
    ['--create-publisher', options.createPublisher],
    ['--accept-findings', options.acceptFindings],
    ['--trusted', options.trusted],
    ['--changelog-from-git', options.changelogFromGit],
  ];
  for (const [flag, on] of flags) if (on) words.push(flag);
  words.push(extra);
  return words.join(' ');
}
