import type { Command } from 'commander';
import type { Ctx } from '../context.js';
import { examples } from '../examples.js';

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('openapi')
    .description('print the OpenAPI 3.1 document of the registry and AI proxy (generated from the wire contract)')
    .action(async () => {
      const { openapiDocument } = await import('../../contract/openapi.js');
      ctx.out.stdout.write(`${JSON.stringify(openapiDocument(ctx.version), null, 2)}\n`);
    });
  examples(command, ['nodereg openapi > openapi.json']);
}
