// The start-up lines on stderr: where the data, database and archives are, what is not where one
// might expect, the callback key and the AI proxy.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RegistryServer } from '../../server/index.js';
import { describeProxy } from '../proxy-flags.js';
import type { ServeSettings } from './options.js';
import type { ServePlace } from './place.js';

export function printBanner(
  info: (line: string) => void,
  server: RegistryServer,
  settings: ServeSettings,
  place: ServePlace,
): void {
  const { dataDir, databaseUrl, databaseTarget, storageUrl, storageTarget } = place;
  info(dataDir ? `data dir: ${dataDir}` : 'data dir: none (everything is in --database and --storage)');
  if (databaseUrl) info(`database: ${databaseTarget?.kind === 'sqlite' ? databaseTarget.path : databaseUrl.text}`);
  warnLocalRegistryLeftBehind(info, place);
  if (storageUrl) info(`archives: ${storageTarget?.kind === 'local' ? storageTarget.dir : storageUrl.text}`);
  else if (databaseTarget?.kind === 'postgres' && dataDir) {
    // A database other instances share, with archives kept on this machine: an upload to one would be a 404 on the others.
    const local = join(dataDir, 'archives');
    info(`archives: ${local}`);
    info(
      `warning: the archives are in ${local}, on this instance only: every instance on this database must serve the same --storage (s3://bucket/prefix, or one shared directory), or an archive uploaded to one is missing (404) on the others`,
    );
  }
  info(
    `callback key for webhook receivers: ${server.keys.callbackKeyPath ?? 'not written without --data-dir (give one instance --data-dir DIR to have DIR/callback-key)'}`,
  );
  for (const line of describeProxy(settings.proxy)) info(line);
}

/** A registry grown onto --database leaves the data dir's own behind: say so, rather than seem to have lost it. */
function warnLocalRegistryLeftBehind(info: (line: string) => void, place: ServePlace): void {
  const { dataDir, databaseTarget } = place;
  const localDb = dataDir === undefined ? undefined : join(dataDir, 'registry.db');
  if (
    localDb &&
    databaseTarget &&
    (databaseTarget.kind !== 'sqlite' || databaseTarget.path !== localDb) &&
    existsSync(localDb)
  ) {
    info(
      `warning: ${localDb} holds a registry that this server does not serve (it serves --database); to move it there, stop the servers and run nodereg restore ${dataDir} --database URL --storage URL (into an empty database)`,
    );
  }
}
