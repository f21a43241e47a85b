// `nodereg version bump`'s work, loaded when it runs (bump.ts declares it).
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import semver from 'semver';
import { MANIFEST_FILE } from '../../../package/manifest/types.js';
import { pep440ToSemver, versionToSemver } from '../../../package/manifest/version.js';
import { checkVersionEdit, findVersionSpot, type VersionSpot, withVersion } from '../../../package/version-spot.js';
import type { Ctx } from '../../context.js';
import { CliError, EXIT, invalidInput } from '../../errors.js';
import { changedFiles, changedList, git, gitOrFail } from '../../git.js';
import { shellWord } from '../../invocation.js';
import { projectDir } from '../../project.js';
import type { BumpOptions, Release } from './bump.js';

/** The tag of a release: the form `--changelog-from-git` looks for first. */
const releaseTag = (version: string) => `v${version}`;

export async function bump(ctx: Ctx, release: Release, dir: string | undefined, o: BumpOptions): Promise<void> {
  if (o.preid !== undefined && release !== 'prerelease')
    throw invalidInput(
      '--preid goes with prerelease only',
      `nodereg version bump prerelease${dir === undefined ? '' : ` ${shellWord(dir)}`} --preid ${shellWord(o.preid)}`,
    );
  const root = projectDir(ctx, dir, MANIFEST_FILE);
  const spot = readSpot(root);
  const written = spot.text.slice(spot.start, spot.end);
  const from = versionToSemver(written);
  if ('error' in from) throw invalidInput(`${spot.key}: ${from.error}`, `write a version such as "1.2.3" there`);
  const to = nextVersion(from.version, release, o.preid ?? 'rc');
  checkPythonReads(spot, to, o.preid);
  const edited = withVersion(spot, to);
  if (!checkVersionEdit(spot, edited, to))
    throw invalidInput(
      `cannot change ${spot.key} in ${MANIFEST_FILE} without touching more than the version`,
      `write version = "${to}" there by hand`,
    );
  const tag = o.git ? checkGit(root, releaseTag(to)) : undefined;
  if (!o.dryRun) {
    writeFileSync(join(root, spot.file), edited);
    if (tag) commitAndTag(root, spot.file, tag);
  }
  const lineStart = spot.text.lastIndexOf('\n', spot.start - 1) + 1;
  const lineEnd = spot.text.indexOf('\n', spot.end);
  const line = spot.text.slice(lineStart, lineEnd < 0 ? undefined : lineEnd);
  const editedLine = line.slice(0, spot.start - lineStart) + to + line.slice(spot.end - lineStart);
  ctx.out.result(
    { from: written, to, file: spot.file, key: spot.key, dry_run: Boolean(o.dryRun), ...(tag ? { tag } : {}) },
    () =>
      `${o.dryRun ? 'would change' : 'changed'} ${spot.key}: ${written} → ${to}\n` +
      `${spot.file}:\n- ${line.trimEnd()}\n+ ${editedLine.trimEnd()}` +
      (tag ? `\n${o.dryRun ? 'would commit and tag' : 'committed and tagged'} ${tag}` : ''),
  );
  if (o.dryRun) ctx.out.info('dry run: nothing was written');
}

function readSpot(root: string): VersionSpot {
  let spot: ReturnType<typeof findVersionSpot>;
  try {
    spot = findVersionSpot(root);
  } catch (error) {
    throw invalidInput(`cannot read ${join(root, MANIFEST_FILE)}: ${(error as Error).message.split('\n')[0]}`);
  }
  if ('error' in spot) throw invalidInput(spot.error);
  return spot;
}

/** `1.2.3` → `1.2.4` (patch); a pre-release ends in its release (`1.2.4-rc.1` → `1.2.4`); prerelease counts from 1. */
export function nextVersion(from: string, release: Release, preid: string): string {
  const next = semver.inc(from, release, preid, '1');
  if (!next)
    throw invalidInput(`cannot raise ${from} (${release} --preid ${preid})`, 'give --preid letters only, e.g. rc');
  return next;
}

/** [project] version and a Python version file are read by pip and build tools too: the label must be PEP 440's. */
function checkPythonReads(spot: VersionSpot, to: string, preid: string | undefined): void {
  if (spot.key === '[tool.nodereg] version') return;
  const read = pep440ToSemver(to);
  if ('error' in read || read.version !== to)
    throw invalidInput(
      `${to} is no PEP 440 version, and ${spot.key} must be one (pip and build tools read it): --preid ${preid} is not a label they know`,
      'use --preid rc, beta or alpha, or keep the version in [tool.nodereg] version',
    );
}

/** Before anything is written: a git work tree with no uncommitted change under the project, and no such tag yet. */
function checkGit(root: string, tag: string): string {
  const changed = changedFiles(root);
  if (!changed) throw invalidInput(`--git needs a git repository with a commit, and ${root} is not in one`);
  if (changed.length)
    throw new CliError(
      `--git commits the new version alone, and files differ from HEAD: ${changedList(changed)}`,
      EXIT.invalid,
      'dirty_tree',
      'commit or stash them and run the same command again, or leave out --git',
    );
  if (git(root, ['rev-parse', '--verify', '--quiet', `refs/tags/${tag}`]).ok)
    throw new CliError(
      `the tag ${tag} exists already`,
      EXIT.conflict,
      'conflict',
      'raise another part, or delete the tag',
    );
  return tag;
}

function commitAndTag(root: string, file: string, tag: string): void {
  const path = resolve(root, file);
  gitOrFail(root, ['add', '--', path], `stage ${file} (the new version is written there)`);
  gitOrFail(root, ['commit', '-q', '-m', tag, '--', path], `commit ${file} (the new version is written and staged)`);
  gitOrFail(root, ['tag', '-a', tag, '-m', tag], `tag ${tag} (the new version is committed)`);
}
