import type { Command } from 'commander';
import type { Ctx } from '../context.js';
import { examples } from '../examples.js';
import type { Options } from './init/entry.js';

export function register(program: Command, ctx: Ctx): void {
  // `init --version 1.2.3` sets the node's version: the program's own --version flag (answered
  // before commander runs anyway) must not take it.
  const versionFlag = program.options.findIndex((option) => option.long === '--version');
  if (versionFlag >= 0) (program.options as Command['options'][number][]).splice(versionFlag, 1);

  const command = program
    .command('init [dir]')
    .description(
      'create pyproject.toml, or add the [tool.nodereg] table to an existing one (nothing else in it changes); asks on a terminal, takes flags otherwise',
    )
    .option('--publisher <id>', 'publisher id ([tool.nodereg] publisher)')
    .option('--name <id>', 'node id ([project] name; default: the directory name)')
    .option('--display-name <name>', 'display name ([tool.nodereg] display-name)')
    .option('--version <version>', 'version ([project] version; default 0.1.0 in a new file)')
    .option('--description <text>', 'description ([project] description)')
    .option('--tags <list>', 'comma-separated tags ([tool.nodereg] tags)')
    .option('--icon <url>', 'icon URL ([tool.nodereg] icon)')
    .action(async (dir: string | undefined, options: Options) => {
      // Without [dir], the project validate, pack and publish would use: a new file in a subdirectory would be a second one.
      const { projectDir } = await import('../project.js');
      const at = projectDir(ctx, dir, 'pyproject.toml', '; `nodereg init .` creates one here instead');
      // the work is in ./init/, loaded only when init runs, as every command's is
      const { init } = await import('./init/run.js');
      return init(ctx, at, options, dir);
    });
  examples(command, [
    'nodereg init',
    'nodereg init --publisher my-team --display-name "My Node" --tags image,upscale',
    'nodereg init ./my-node --publisher my-team --name my-node --version 1.0.0 --no-input',
  ]);
}
