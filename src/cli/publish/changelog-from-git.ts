// `publish --changelog-from-git`: the changelog is the subjects of the commits that touch the project
// since the tag of the previous version (the highest version tag below the one published that HEAD
// contains: v1.2.3, 1.2.3, or the node's own, my-node-v1.2.3 or my-node@1.2.3, for a repository of
// several nodes). The registry keeps no commit of a version, so tags are all there is to go by.
import { resolve } from 'node:path';
import semver from 'semver';
import { CHANGELOG_MAX } from '../../contract/limits.js';
import { readManifest } from '../../package/manifest.js';
import { MANIFEST_FILE } from '../../package/manifest/types.js';
import type { ChangelogInput } from '../../package/manifest.js';
import type { Ctx } from '../context.js';
import { invalidInput } from '../errors.js';
import { git, gitOrFail, hasHead } from '../git.js';
import { projectAbove } from '../project.js';
import type { PublishOptions } from './options.js';

export const FROM_GIT = '--changelog-from-git';

/** The changelog of the commits since the previous version's tag; undefined when the manifest has no version (loadChecked says so). */
export function changelogFromGit(
  ctx: Ctx,
  dir: string | undefined,
  options: PublishOptions,
): ChangelogInput | undefined {
  if (options.changelog !== undefined || options.changelogFile !== undefined)
    throw invalidInput(
      `${FROM_GIT} cannot be used with --changelog or --changelog-file`,
      'give the changelog one way: leave out one of them',
    );
  const root = dir === undefined ? projectAbove(resolve('.'), MANIFEST_FILE) : resolve(dir);
  const manifest = readManifest(root);
  if (!manifest.version || !manifest.nodeId) return undefined;
  if (!hasHead(root))
    throw invalidInput(`${FROM_GIT} reads the commits of a git repository, and ${root} is in none (or has no commit)`);
  const since = previousTag(root, manifest.nodeId, manifest.version);
  const range = since ? [`${since.tag}..HEAD`] : ['HEAD'];
  const subjects = gitOrFail(root, ['log', '--no-merges', '--format=%s', ...range, '--', '.'], 'list the commits')
    .split('\n')
    .filter(Boolean);
  if (!subjects.length)
    throw invalidInput(
      `${FROM_GIT}: no commit touches the project since ${since?.tag}`,
      'commit the changes first, or give the changelog with --changelog',
    );
  if (!since)
    ctx.out.info(
      `${FROM_GIT}: no tag of a version below ${manifest.version} (such as v1.0.0) is in HEAD's history, so the changelog lists every commit`,
    );
  return { text: changelogText(subjects), source: since ? `${FROM_GIT} (commits since ${since.tag})` : FROM_GIT };
}

/** `- subject` lines, newest first, as many as the registry keeps. */
function changelogText(subjects: string[]): string {
  const lines: string[] = [];
  let length = 0;
  for (const [i, subject] of subjects.entries()) {
    const line = `- ${subject}`;
    const rest = `- and ${subjects.length - i} earlier commits`;
    if (length + line.length + 1 + rest.length > CHANGELOG_MAX) return [...lines, rest].join('\n');
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join('\n');
}

/** The tag, in HEAD's history, of the highest version below `version`. */
function previousTag(root: string, nodeId: string, version: string): { tag: string; version: string } | undefined {
  const listed = git(root, ['tag', '--merged', 'HEAD']);
  if (!listed.ok) return undefined;
  let best: { tag: string; version: string } | undefined;
  for (const tag of listed.stdout.split('\n').filter(Boolean)) {
    const found = tagVersion(tag, nodeId);
    if (!found || !semver.lt(found, version)) continue;
    if (!best || semver.gt(found, best.version)) best = { tag, version: found };
  }
  return best;
}

/** `v1.2.3`, `1.2.3`, `my-node-v1.2.3`, `my-node@1.2.3` → `1.2.3`; another node's tag or another tag → undefined. */
function tagVersion(tag: string, nodeId: string): string | undefined {
  const own = [`${nodeId}-`, `${nodeId}@`, `${nodeId}/`].find((prefix) => tag.startsWith(prefix));
  const rest = own ? tag.slice(own.length) : tag;
  return /^v?\d/.test(rest) ? (semver.valid(rest.replace(/^v/, '')) ?? undefined) : undefined;
}
