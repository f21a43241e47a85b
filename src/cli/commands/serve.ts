// `nodereg serve`: its options are in serve/options.ts; serve/run.ts does the work.
import type { Command } from 'commander';
import { CLOSE_MAX_MS, CLOSE_STALLED_MS } from '../../shared/tuning.js';
import type { Ctx } from '../context.js';
import { examples } from '../examples.js';
import { addServeOptions, type ServeFlags } from '../serve/options.js';
import { runServe } from '../serve/run.js';
import { layerSources, namedByOrigin } from '../serve/sources.js';

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('serve')
    .description(
      `run the embedded registry (SQLite and a local archive dir) until SIGINT or SIGTERM (in-flight requests finish; a stalled one is cut after ${CLOSE_STALLED_MS / 1000} s, every one left ${CLOSE_MAX_MS / 1000} s after the signal)`,
    );
  addServeOptions(command).action(async (_flags: ServeFlags, self: Command) => {
    const origins = await layerSources(self, ctx.env);
    await runServe(ctx, self.opts<ServeFlags>()).catch((error: unknown) => {
      throw namedByOrigin(error, origins);
    });
  });
  examples(command, [
    'nodereg serve',
    'nodereg serve --port 0 --data-dir ./registry-data --log json',
    'nodereg serve --host 0.0.0.0 --public-url https://registry.example.com --review manual',
    'NODEREG_IMG_API_KEY=... nodereg serve --img-upstream https://img.provider.example --callback-allow hooks.example.com',
  ]);
}
