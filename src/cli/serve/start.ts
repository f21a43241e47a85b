// Opening the database and the archive storage, making the registry server and listening.
import type { RegistryServer } from '../../server/index.js';
import { withBackend } from '../backend-urls.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, invalidInput } from '../errors.js';
import { accessLog } from './access-log.js';
import type { ServeFlags, ServeSettings } from './options.js';
import type { ServePlace } from './place.js';

/** --migrate-only: apply the database's migrations and say where. */
export async function migrateOnly(place: ServePlace, info: (line: string) => void): Promise<void> {
  const { databaseTarget, databaseUrl } = place;
  if (!databaseTarget || !databaseUrl)
    throw invalidInput(
      '--migrate-only needs --database (or NODEREG_DATABASE_URL)',
      '--database postgres://user:pass@host:5432/db --migrate-only',
    );
  const backends = await import('../../server/backends.js');
  await withBackend(databaseUrl, () => backends.migrateOnly(databaseTarget, info));
  info(
    `migrations applied to ${databaseTarget.kind === 'sqlite' ? databaseTarget.path : databaseUrl.text} (${databaseUrl.name})`,
  );
}

/** Opens the backends, makes the server and listens; a failure is a CliError naming what to fix. */
export async function startServer(
  ctx: Ctx,
  flags: ServeFlags,
  settings: ServeSettings,
  place: ServePlace,
): Promise<{ server: RegistryServer; url: string }> {
  const { createRegistryServer } = await import('../../server/index.js');
  const backends = await import('../../server/backends.js');
  const info = (line: string) => ctx.out.info(line);
  const { databaseUrl, storageUrl, databaseTarget, storageTarget, dataDir } = place;
  const archives = await withBackend(storageUrl, () => backends.openStorageTarget(storageTarget!, ctx.env));
  const database = await withBackend(databaseUrl, () => backends.openDatabaseTarget(databaseTarget!, info));
  let server: RegistryServer;
  try {
    server = createRegistryServer({
      ...settings,
      database,
      archives,
      backendUrls: { database: databaseUrl?.text, storage: storageUrl?.text },
      dataDir,
      log: accessLog(flags.log === 'off' ? 'pretty' : flags.log, ctx.out), // errors are logged even with --log off
      accessLog: accessLog(flags.log, ctx.out) ?? false,
      version: ctx.version,
      adminToken: ctx.env.NODEREG_ADMIN_TOKEN || undefined,
      rotateAdminToken: flags.rotateAdminToken,
    });
  } catch (error) {
    const source = flags.dataDir !== undefined ? '--data-dir' : ctx.env.XDG_DATA_HOME ? 'XDG_DATA_HOME' : 'HOME';
    const named = dataDir === undefined ? '(none)' : `${dataDir} (${source})`;
    throw new CliError(`cannot open the data dir ${named}: ${(error as Error).message}`, EXIT.failure, 'data_dir');
  }
  try {
    return { server, url: await server.listen() };
  } catch (error) {
    await server.close().catch(() => {});
    const { StartRefusedError } = await import('../../server/start-refusal.js');
    if (error instanceof StartRefusedError) throw new CliError(error.message, EXIT[error.exit], error.code, error.fix);
    throw listenError(error as NodeJS.ErrnoException, settings.host, settings.port);
  }
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): CliError {
  if (error.code === 'EADDRINUSE') {
    return new CliError(
      `port ${port} on ${host} is already in use`,
      EXIT.failure,
      'port_in_use',
      'stop the other server, or pick another port with --port (0 picks a free one)',
    );
  }
  if (error.code === 'EACCES') {
    return new CliError(
      `not allowed to listen on port ${port} on ${host}`,
      EXIT.failure,
      'port_denied',
      'use a port above 1023, or --port 0',
    );
  }
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
    return new CliError(
      `cannot listen on host ${host}: no such address here`,
      EXIT.failure,
      'bad_host',
      '--host 127.0.0.1 or --host 0.0.0.0',
    );
  }
  return new CliError(`cannot listen on ${host}:${port}: ${error.message}`, EXIT.failure, 'listen');
}
