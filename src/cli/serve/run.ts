// `nodereg serve`: check the flags, start the registry, say where everything is, then run until a signal.
import type { Ctx } from '../context.js';
import { reportAdminToken } from './admin-token.js';
import { printBanner } from './banner.js';
import { type ServeFlags, serverSettings } from './options.js';
import { servePlace } from './place.js';
import { closeOnSignal } from './signals.js';
import { migrateOnly, startServer } from './start.js';
import { upstreamOptionsFromFlags } from './upstream-flags.js';

export async function runServe(ctx: Ctx, flags: ServeFlags): Promise<void> {
  // With --log json every line on stderr is JSON, from the first (start-up lines, warnings, errors).
  ctx.out.jsonLines = flags.log === 'json';
  const info = (line: string) => ctx.out.info(line);
  // Every flag is checked before anything starts.
  const settings = serverSettings(flags, ctx.env);
  settings.upstream = await upstreamOptionsFromFlags(flags);
  const place = await servePlace(flags, ctx.env, settings.maxArchive);
  if (flags.migrateOnly) return migrateOnly(place, info);

  const { server, url } = await startServer(ctx, flags, settings, place);
  const closed = closeOnSignal(server, info);
  printBanner(info, server, settings, place);
  const generated = await reportAdminToken(ctx, server, url, settings, place);

  // The one line on stdout, once the admin token is in place: scripts wait for it and read the URL.
  const listening = `nodereg registry listening on ${url}`;
  if (ctx.out.jsonLines) ctx.out.record('info', { message: listening, url }, ctx.stdout);
  else ctx.stdout.write(`${listening}\n`);

  if (flags.seed && place.empty) await seedEmptyRegistry(ctx, url, ctx.env.NODEREG_ADMIN_TOKEN || generated);
  await closed;
}

/** --seed on an empty data dir: an example publisher and a published node; a failure is only a warning. */
async function seedEmptyRegistry(ctx: Ctx, url: string, adminToken: string | undefined): Promise<void> {
  if (!adminToken) {
    ctx.out.warn('not seeding: no admin token is known (set NODEREG_ADMIN_TOKEN)');
    return;
  }
  const { seed } = await import('../seed.js');
  await seed(url, adminToken, ctx).catch((error: Error) => ctx.out.warn(`seeding failed: ${error.message}`));
}
