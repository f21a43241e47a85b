// `nodereg version bump patch|minor|major|prerelease [dir]`: the next version, written where the
// manifest keeps it (package/version-spot.ts), every other byte of the file kept; `--git` commits
// the change and tags it `vX.Y.Z`, from a clean tree only.
import { Argument, type Command } from 'commander';
import type { Ctx } from '../../context.js';
import { examples } from '../../examples.js';

const RELEASES = ['patch', 'minor', 'major', 'prerelease'] as const;
export type Release = (typeof RELEASES)[number];

export interface BumpOptions {
  preid?: string;
  git?: boolean;
  dryRun?: boolean;
}

export function registerBump(version: Command, ctx: Ctx): void {
  examples(
    version
      .command('bump')
      .addArgument(new Argument('<release>', 'which part to raise').choices(RELEASES))
      .argument('[dir]', 'the node (default: the current directory)')
      .description(
        "raise the project's version where pyproject.toml keeps it ([project] version, [tool.nodereg] version, or the [tool.comfy.version] path file), changing nothing else in the file",
      )
      .option('--preid <id>', 'the pre-release label of prerelease (default rc: 1.2.3 → 1.2.4-rc.1)')
      .option('--git', 'commit the change and tag it vX.Y.Z (refuses a tree with uncommitted changes)')
      .option('--dry-run', 'show the change; write nothing')
      .action(async (release: Release, dir: string | undefined, o: BumpOptions) =>
        (await import('./bump-run.js')).bump(ctx, release, dir, o),
      ),
    [
      'nodereg version bump patch',
      'nodereg version bump minor --git && git push --follow-tags',
      'nodereg version bump prerelease --preid beta --dry-run',
    ],
  );
}
