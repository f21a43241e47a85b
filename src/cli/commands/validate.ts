import type { Command } from 'commander';
import { formatSize } from '../../contract/size.js';
import type { Ctx } from '../context.js';
import type { ScanSeverity } from '../../contract/scan.js';
import { blocking, failOnOption, findingsError, findingsText, scanProject } from '../findings.js';
import { loadChecked, readChangelog, type ChangelogFlags } from '../project.js';
import { examples } from './index.js';

interface Options extends ChangelogFlags {
  publisher?: string;
  failOn: ScanSeverity;
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('validate [dir]')
    .description('check pyproject.toml and the file set as the registry would, without any network; every problem at once (exit 2)')
    .option('--publisher <id>', 'publisher id (overrides [tool.nodereg] publisher)')
    .option('--changelog <text>', 'changelog of the version, checked like publish does')
    .option('--changelog-file <file>', 'read the changelog from a file (- for stdin)')
    .addOption(failOnOption())
    .action(async (dir: string | undefined, options: Options) => {
      const changelog = await readChangelog(ctx, options);
      const project = await loadChecked(ctx, dir, { requirePublisher: true, publisher: options.publisher, changelog });
      const { request, files } = project;
      const unpacked = files.reduce((sum, f) => sum + f.size, 0);
      // The scan, as `nodereg scan` runs it: findings at --fail-on fail like any other problem.
      const scan = await scanProject(project);
      const stopping = blocking(scan, options.failOn);
      if (stopping.length) throw findingsError(stopping, options.failOn, false);
      const shown = scan.findings.some((f) => !f.suppressed) ? `\n\n${findingsText(ctx.out, scan, files)}` : '';
      ctx.out.result(
        {
          valid: true,
          publisher_id: request.publisherId,
          node_id: request.nodeId,
          version: request.version,
          files: files.length,
          unpacked_size: unpacked,
          warnings: project.warnings,
          scan,
        },
        `${request.nodeId} ${request.version} (publisher ${request.publisherId}) is ready to publish: ${files.length} file${files.length === 1 ? '' : 's'}, ${formatSize(unpacked)}${shown}`,
      );
    });
  examples(command, ['nodereg validate', 'nodereg validate ./my-node --json', 'nodereg validate --publisher my-team', 'nodereg validate --fail-on medium']);
}
