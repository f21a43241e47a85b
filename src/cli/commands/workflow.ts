// `nodereg workflow deps FILE`: the packs a workflow needs, resolved against the registry.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiError } from '../../client/errors.js';
import { routes } from '../../client/routes.js';
import type { Ctx } from '../context.js';
import { fileProblem, invalidInput, toCliError } from '../errors.js';
import { depsText, resolveDeps } from '../workflow/deps.js';
import { WorkflowFormatError, workflowNodeTypes } from '../workflow/node-types.js';
import { examples } from '../examples.js';

function readWorkflow(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw invalidInput(`cannot read ${file}: ${fileProblem(error)}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidInput(
      `${file} is not JSON: ${(error as Error).message}`,
      'give the workflow as the host application saves or exports it (.json)',
    );
  }
}

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
      let types;
      try {
        types = workflowNodeTypes(readWorkflow(file));
      } catch (error) {
        if (error instanceof WorkflowFormatError) throw invalidInput(`${file}: ${error.message}`);
        throw error;
      }
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
