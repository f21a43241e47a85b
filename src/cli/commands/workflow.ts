// `nodereg workflow deps FILE`: the packs a workflow needs, resolved against the registry.
import type { Command } from 'commander';
import { ApiError } from '../../client/errors.js';
import { routes } from '../../client/routes.js';
import type { Ctx } from '../context.js';
import { toCliError } from '../errors.js';
import { depsText, resolveDeps } from '../workflow/deps.js';
import { readWorkflowTypes } from '../workflow/read-file.js';
import { examples } from '../examples.js';

export function register(program: Command, ctx: Ctx): void {
  const workflow = examples(program.command('workflow').description('read workflows of the host application'), [
    'nodereg workflow deps my-workflow.json',
  ]);
  const deps = workflow
    .command('deps <file>')
    .description(
      'list the packs a workflow needs (UI or API format): each node class resolved against the registry, core classes and unknown ones apart',
    )
    .action(async (file: string) => {
      const types = readWorkflowTypes(file);
      const client = await ctx.client();
      const lookup = async (comfyNodeName: string) => {
        try {
          return (await client.call(routes.getComfyNodeNode, { params: { comfyNodeName } })).id;
        } catch (error) {
          if (error instanceof ApiError && error.status === 404) return undefined;
          throw toCliError(error);
        }
      };
      const found = await resolveDeps(types, lookup);
      ctx.out.result(found, () => depsText(found));
    });
  examples(deps, ['nodereg workflow deps my-workflow.json', 'nodereg workflow deps api-workflow.json --json']);
}
