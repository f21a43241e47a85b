import type { Command } from 'commander';
import { formatSize } from '../../contract/size.js';
import type { Ctx } from '../context.js';
import { table } from '../output.js';
import { loadChecked, readChangelog, type ChangelogFlags } from '../project.js';
import { examples } from './index.js';

interface Options extends ChangelogFlags {
  publisher?: string;
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('validate [dir]')
    .description('check pyproject.toml and the file set as the registry would, without any network; every problem at once (exit 2)')
    .option('--publisher <id>', 'publisher id (overrides [tool.nodereg] publisher)')
    .option('--changelog <text>', 'changelog of the version, checked like publish does')
    .option('--changelog-file <file>', 'read the changelog from a file (- for stdin)')
    .action(async (dir: string | undefined, options: Options) => {
      const changelog = await readChangelog(ctx, options);
      const project = await loadChecked(ctx, dir, { requirePublisher: true, publisher: options.publisher, changelog });
      const { request, files } = project;
      const unpacked = files.reduce((sum, f) => sum + f.size, 0);
      // Which key set each field, so that a manifest read from [tool.comfy] or classifiers says so.
      const keys = Object.fromEntries(project.manifest.keys);
      // A field sent on the node and on the version is shown once.
      const sources = new Map<string, string>();
      for (const [path, key] of project.manifest.keys) sources.set(`${path.replace(/^node(_version)?\./, '')}\0${key}`, key);
      ctx.out.result(
        {
          valid: true,
          publisher_id: request.publisherId,
          node_id: request.nodeId,
          version: request.version,
          files: files.length,
          unpacked_size: unpacked,
          keys,
          warnings: project.warnings,
        },
        () =>
          `${request.nodeId} ${request.version} (publisher ${request.publisherId}) is ready to publish: ${files.length} file${files.length === 1 ? '' : 's'}, ${formatSize(unpacked)}\n` +
          `read from:\n${table([...sources].map(([id, key]) => [`  ${id.split('\0')[0]}`, key]))}`,
      );
    });
  examples(command, ['nodereg validate', 'nodereg validate ./my-node --json', 'nodereg validate --publisher my-team']);
}
