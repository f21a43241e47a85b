// `nodereg publish [dir]`: its options; publish/run.ts does the work.
import type { Command } from 'commander';
import { formatSize } from '../../contract/size.js';
import { DEFAULT_MAX_ARCHIVE } from '../../shared/tuning.js';
import type { Ctx } from '../context.js';
import { exitCodesHelp } from '../errors.js';
import { examples } from '../examples.js';
import { failOnOption } from '../findings.js';
import type { PublishOptions } from '../publish/options.js';
import { publishProject } from '../publish/run.js';
import { allOption, type ManyFlags, nodeDirs } from '../project-discovery.js';

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('publish [dirs...]')
    .description(
      'validate, pack and publish the node in dir (default: the current directory), then upload its archive; with several dirs (or --all) every node is checked, scanned and packed before any is published',
    )
    .addOption(allOption())
    .option('--dry-run', 'validate and pack, then print the request and the file list; send nothing')
    .option(
      '--skip-existing',
      'a version already published with the same archive is success (exit 0); with another archive, or withdrawn (deleted), it is exit 3',
    )
    .option('--changelog <text>', 'changelog of this version (else env NODEREG_CHANGELOG)')
    .option('--changelog-file <file>', 'read the changelog from a file (- for stdin)')
    .option(
      '--changelog-from-git',
      "the changelog is the subjects of the commits since the previous version's tag (v1.2.3); --dry-run shows it",
    )
    .option('--allow-dirty', 'publish files that differ from the last commit (HEAD) as they are; else that is refused')
    .option('--publisher <id>', 'publisher id (overrides [tool.nodereg] publisher and [tool.comfy] PublisherId)')
    .option('--create-publisher', 'create the publisher first if it does not exist (needs a user token)')
    .option('--max-size <size>', `fail when the archive is larger (default ${formatSize(DEFAULT_MAX_ARCHIVE)})`)
    .addOption(failOnOption(program))
    .option(
      '--accept-findings',
      'publish even when the scan finds something at or above --fail-on (the registry may still flag the version)',
    )
    .option(
      '--trusted',
      "publish with the CI job's OIDC token, exchanged at the registry for a 15-minute token (the default in GitHub Actions with id-token: write and no NODEREG_TOKEN)",
    )
    .action(async (dirs: string[], options: PublishOptions & ManyFlags) => {
      if (!options.all && dirs.length <= 1) return publishProject(ctx, dirs[0], options);
      const { publishMany } = await import('../publish/many.js');
      const commandNodes = [...(options.all ? ['--all'] : []), ...dirs];
      return publishMany(ctx, await nodeDirs(dirs, options.all), { ...options, commandNodes });
    })
    .addHelpText('after', exitCodesHelp('publish'));
  examples(command, [
    'nodereg publish --dry-run',
    'NODEREG_TOKEN=... nodereg publish --skip-existing --changelog-file CHANGELOG.md',
    'nodereg publish ./my-node --publisher my-team --create-publisher',
    'nodereg publish --fail-on critical',
    'nodereg publish --trusted',
    'nodereg version bump patch --git && nodereg publish --changelog-from-git',
    'nodereg publish --all --skip-existing',
    'nodereg publish nodes/a nodes/b --dry-run',
  ]);
}
