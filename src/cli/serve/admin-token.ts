// The admin's token at start-up: shown once when generated, and saved into a CLI profile so that a
// newcomer's next command can use it.
import { existsSync, readFileSync } from 'node:fs';
import type { RegistryServer } from '../../server/index.js';
import { DEFAULT_REGISTRY_URL } from '../../shared/tuning.js';
import { sameRegistry } from '../config.js';
import type { Ctx } from '../context.js';
import { shellWord } from '../invocation.js';
import type { ServeSettings } from './options.js';
import type { ServePlace } from './place.js';

/** Says where the admin token is (printing it when this start generated it) and saves it; returns a generated one. */
export async function reportAdminToken(
  ctx: Ctx,
  server: RegistryServer,
  url: string,
  settings: ServeSettings,
  place: ServePlace,
): Promise<string | undefined> {
  const info = (line: string) => ctx.out.info(line);
  const { adminTokenFile, hadAdminTokenFile, dataDir, defaultDir } = place;
  const generated =
    (server as { generatedAdminToken?: string }).generatedAdminToken ??
    (adminTokenFile && !hadAdminTokenFile && existsSync(adminTokenFile)
      ? readFileSync(adminTokenFile, 'utf8').trim()
      : undefined);
  // A JSON log is kept and shipped to log stores: the token stays in its 0600 file there.
  if (generated && ctx.out.jsonLines)
    info(`admin token generated into ${adminTokenFile} (not written to a JSON log; read it there)`);
  else if (generated) info(`admin token (shown once; also in ${adminTokenFile}): ${generated}`);
  // Every later start says where it is: a first start that failed after generating it (a port in use) printed nothing.
  else if (adminTokenFile && server.liveFileAdminToken)
    info(`admin token: in ${adminTokenFile} (printed only when generated)`);
  // Only a live token: on a shared database that kept another, DIR/admin-token's is dead there.
  const live = server.liveFileAdminToken;
  if (adminTokenFile && dataDir === defaultDir && live && settings.port === 0 && settings.publicUrl === undefined) {
    // A picked port is this run's only: a profile pointing at it would send every later command to a dead port after a restart.
    info(
      `admin token not saved to a profile: --port 0 picked port ${new URL(url).port} for this run only; point commands at it with NODEREG_REGISTRY=${url} NODEREG_TOKEN=$(cat ${adminTokenFile}), or serve on a fixed --port to have it saved`,
    );
  } else if (adminTokenFile && dataDir === defaultDir && live) {
    await saveAdminToken(ctx, server.publicUrl(), live, adminTokenFile).catch((error: Error) =>
      ctx.out.warn(`could not save the admin token into the CLI config: ${error.message}`),
    );
  }
  return generated;
}

/**
 * A newcomer needs no token setup: the admin token goes into the profile that talks to this URL when
 * no profile for it has a token yet, else into the default profile if there is none yet, else into a
 * new `local` profile.
 */
async function saveAdminToken(ctx: Ctx, url: string, token: string, tokenFile: string): Promise<void> {
  if (!token) return;
  const store = await ctx.config();
  const profiles = store.profiles();
  const matching = Object.entries(profiles).filter(([, p]) => sameRegistry(p.registry ?? DEFAULT_REGISTRY_URL, url));
  if (matching.some(([, p]) => p.token)) return;
  let name = matching[0]?.[0];
  if (!name) {
    if (!profiles.default)
      name = 'default'; // a newcomer's first registry becomes the default one
    else if (!profiles.local) name = 'local';
    else
      return ctx.out.hint(
        `profiles "default" and "local" point elsewhere: the admin token is in ${tokenFile} (see \`nodereg config set token\`)`,
      );
  }
  store.setProfile(name, { registry: url, token });
  ctx.out.info(`saved the admin token to profile "${name}" (${store.path})`);
  if (name !== 'default')
    ctx.out.hint(`use it with --profile ${shellWord(name)} (or NODEREG_PROFILE=${shellWord(name)})`);
}
