import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { userPath } from '../make-dir.js';
import { Option, type Command } from 'commander';
import { CLOSE_MAX_MS, CLOSE_STALLED_MS, DEFAULT_PORT, DEFAULT_REGISTRY_URL } from '../../shared/tuning.js';
import { SCAN_MODES } from '../../shared/scan.js';
import { parseSize } from '../../shared/size.js';
import { withoutUserInfo } from '../../shared/url.js';
import type { RegistryServer } from '../../server/index.js';
import { sameRegistry } from '../config.js';
import type { Ctx } from '../context.js';
import type { Output } from '../output.js';
import { dataDirOption, defaultDataDir } from '../data-dir.js';
import { backendOption, backendUrl, withBackend } from '../backend-urls.js';
import { addProxyFlags, describeProxy, proxyOptionsFromFlags, type ProxyFlags } from '../proxy-flags.js';
import { CliError, EXIT, invalidInput } from '../errors.js';
import { examples } from '../examples.js';

interface ServeFlags extends ProxyFlags {
  host: string;
  port: string;
  dataDir?: string;
  database?: string;
  storage?: string;
  publicUrl?: string;
  review: 'auto' | 'manual';
  scan: (typeof SCAN_MODES)[number];
  maxArchive: string;
  maxUnpacked: string;
  rateLimit?: string;
  log: 'pretty' | 'json' | 'off';
  seed?: boolean;
  migrateOnly?: boolean;
}

const LOG_FORMATS = ['pretty', 'json', 'off'] as const;

function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535))
    throw invalidInput(`--port must be a port number from 0 to 65535 (got "${text}")`, '--port 0 picks a free port');
  return port;
}

function parseSizeFlag(flag: string, text: string): number {
  const size = parseSize(text);
  if (size === undefined || size <= 0)
    throw invalidInput(`${flag} must be a size such as 200MiB, 500kB or 1048576 (got "${text}")`);
  return size;
}

function parseRateLimit(text: string): number {
  const match = /^\s*(\d{1,9})\s*(?:\/\s*min)?\s*$/.exec(text);
  const limit = match ? Number(match[1]) : 0;
  if (!limit) throw invalidInput(`--rate-limit must be requests per minute such as 60/min (got "${text}")`);
  return limit;
}

function parsePublicUrl(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    // reported below
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash) {
    throw invalidInput(
      `--public-url must be an http or https URL without query or fragment (got "${text}")`,
      '--public-url https://registry.example.com',
    );
  }
  // Every download and upload URL, and /openapi.json, are built on it and shown to anyone.
  if (url.username || url.password) {
    throw invalidInput(
      `--public-url must not hold a user name or password: every download URL and /openapi.json would show it to anyone (got "${withoutUserInfo(text)}")`,
      '--public-url https://registry.example.com',
    );
  }
  return text.replace(/\/+$/, '');
}

/** Access log lines: "GET /nodes 200 1.2ms" as is with a time (pretty), or one JSON object per line. */
function accessLog(
  format: ServeFlags['log'],
  out: Output,
): ((line: string, level?: 'warn' | 'error') => void) | undefined {
  if (format === 'off') return undefined;
  if (format === 'pretty') return (line) => out.info(`${new Date().toISOString().slice(11, 19)} ${line}`);
  return (line, level) => {
    const request = /^([A-Z]+) (\S+) (\d{3}) ([\d.]+)ms$/.exec(line);
    out.record(
      level ?? 'info',
      request
        ? { method: request[1], path: request[2], status: Number(request[3]), ms: Number(request[4]) }
        : { message: line },
    );
  };
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('serve')
    .description(
      `run the embedded registry (SQLite and a local archive dir) until SIGINT or SIGTERM (in-flight requests finish; a stalled one is cut after ${CLOSE_STALLED_MS / 1000} s, every one left ${CLOSE_MAX_MS / 1000} s after the signal)`,
    )
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on; 0 picks a free port', String(DEFAULT_PORT))
    .addOption(
      dataDirOption(
        'where the database, archives and secrets live',
        'none with --database postgres://, which then needs --storage and NODEREG_ADMIN_TOKEN',
      ),
    )
    .addOption(
      backendOption(
        'database',
        'the database: postgres://user:pass@host:port/db, or a path or sqlite:PATH (default: DIR/registry.db)',
      ),
    )
    .addOption(
      backendOption(
        'storage',
        'where archives live: a directory (default: DIR/archives) or s3://bucket/prefix (endpoint, region and keys from AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)',
      ),
    )
    .option(
      '--public-url <url>',
      'the URL clients reach this server at, for upload and download URLs (default: the listening URL)',
    )
    .addOption(
      new Option('--review <mode>', 'auto: uploaded versions become active; manual: they wait for an admin')
        .choices(['auto', 'manual'])
        .default('auto'),
    )
    .addOption(
      new Option(
        '--scan <mode>',
        'scan uploaded archives in a worker thread; flag: a high or critical finding makes the version Flagged; warn: only keep the findings; off',
      )
        .choices(SCAN_MODES)
        .default('flag'),
    )
    .option('--max-archive <size>', 'largest archive accepted, compressed', '200MiB')
    .option('--max-unpacked <size>', 'largest archive accepted, expanded', '1GiB')
    .option(
      '--rate-limit <n/min>',
      'mutating requests per minute per user, or per address without a valid token (off unless set)',
    )
    .addOption(
      new Option(
        '--log <format>',
        'access log on stderr; json: every line (start-up, warnings, errors, a bad flag wherever --log json is given, the URL line on stdout too) is one JSON object',
      )
        .choices(LOG_FORMATS)
        .default('pretty'),
    )
    .option(
      '--migrate-only',
      'apply the database migrations and exit (instances starting together wait for each other)',
    )
    .option('--seed', 'on an empty data dir, create an example publisher and a published node')
    .action(async (flags: ServeFlags) => {
      // With --log json every line on stderr is JSON, from the first (start-up lines, warnings, errors).
      ctx.out.jsonLines = flags.log === 'json';
      // Every flag is checked before anything starts.
      const port = parsePort(flags.port);
      const maxArchive = parseSizeFlag('--max-archive', flags.maxArchive);
      const maxUnpacked = parseSizeFlag('--max-unpacked', flags.maxUnpacked);
      const rateLimit = flags.rateLimit === undefined ? undefined : parseRateLimit(flags.rateLimit);
      const publicUrl = flags.publicUrl === undefined ? undefined : parsePublicUrl(flags.publicUrl);
      if (!flags.host.trim()) throw invalidInput('--host must not be empty', '--host 127.0.0.1');
      const proxy = proxyOptionsFromFlags(flags, ctx.env);
      const defaultDir = defaultDataDir(ctx.env);
      const info = (line: string) => ctx.out.info(line);

      const { createRegistryServer } = await import('../../server/index.js');
      const backends = await import('../../server/backends.js');
      const databaseUrl = backendUrl(ctx.env, flags, 'database');
      const storageUrl = backendUrl(ctx.env, flags, 'storage');
      const databaseTarget = await withBackend(databaseUrl, backends.parseDatabaseUrl);
      const storageTarget = await withBackend(storageUrl, backends.parseStorageUrl);
      // With PostgreSQL an instance needs no local state: without --data-dir it has none.
      const stateless = flags.dataDir === undefined && databaseTarget?.kind === 'postgres';
      const dataDir = stateless
        ? undefined
        : flags.dataDir === undefined
          ? defaultDir
          : userPath(flags.dataDir, '--data-dir');
      if (stateless && !flags.migrateOnly) {
        if (!storageTarget)
          throw invalidInput(
            'with --database postgres://… and no --data-dir, --storage (or NODEREG_STORAGE_URL) must say where archives live',
            '--storage s3://bucket/prefix',
          );
        if (!ctx.env.NODEREG_ADMIN_TOKEN) {
          throw invalidInput(
            "with --database postgres://… and no --data-dir, set NODEREG_ADMIN_TOKEN (the admin's token, the same on every instance)",
            'or give --data-dir DIR to keep a generated one in DIR/admin-token',
          );
        }
      }
      const adminTokenFile = dataDir === undefined ? undefined : join(dataDir, 'admin-token');
      const hadAdminTokenFile = adminTokenFile !== undefined && existsSync(adminTokenFile);
      if (dataDir !== undefined && existsSync(dataDir) && !statSync(dataDir).isDirectory()) {
        throw new CliError(
          `cannot open the data dir ${dataDir}: it is a file, not a directory`,
          EXIT.failure,
          'data_dir',
          '--data-dir DIR names a directory (created when missing)',
        );
      }
      const empty = dataDir !== undefined && (!existsSync(dataDir) || readdirSync(dataDir).length === 0);
      if (storageTarget?.kind === 's3' && maxArchive > backends.S3_MAX_PUT) {
        throw invalidInput(
          `--max-archive must be at most 5GiB with S3 storage (one PUT stores an archive) (got "${flags.maxArchive}")`,
        );
      }
      if (flags.migrateOnly) {
        if (!databaseTarget)
          throw invalidInput(
            '--migrate-only needs --database (or NODEREG_DATABASE_URL)',
            '--database postgres://user:pass@host:5432/db --migrate-only',
          );
        await withBackend(databaseUrl, () => backends.migrateOnly(databaseTarget, info));
        info(
          `migrations applied to ${databaseTarget.kind === 'sqlite' ? databaseTarget.path : databaseUrl!.text} (${databaseUrl!.name})`,
        );
        return;
      }
      const archives = await withBackend(storageUrl, () => backends.openStorageTarget(storageTarget!, ctx.env));
      const database = await withBackend(databaseUrl, () => backends.openDatabaseTarget(databaseTarget!, info));
      let server: RegistryServer;
      try {
        server = createRegistryServer({
          database,
          archives,
          backendUrls: { database: databaseUrl?.text, storage: storageUrl?.text },
          dataDir,
          host: flags.host,
          port,
          publicUrl,
          review: flags.review,
          scan: flags.scan,
          maxArchive,
          maxUnpacked,
          rateLimit,
          log: accessLog(flags.log === 'off' ? 'pretty' : flags.log, ctx.out), // errors are logged even with --log off
          accessLog: accessLog(flags.log, ctx.out) ?? false,
          version: ctx.version,
          adminToken: ctx.env.NODEREG_ADMIN_TOKEN || undefined,
          proxy,
        });
      } catch (error) {
        const source = flags.dataDir !== undefined ? '--data-dir' : ctx.env.XDG_DATA_HOME ? 'XDG_DATA_HOME' : 'HOME';
        const named = dataDir === undefined ? '(none)' : `${dataDir} (${source})`;
        throw new CliError(`cannot open the data dir ${named}: ${(error as Error).message}`, EXIT.failure, 'data_dir');
      }

      let url: string;
      try {
        url = await server.listen();
      } catch (error) {
        await server.close().catch(() => {});
        const { StartRefusedError } = await import('../../server/start-refusal.js');
        if (error instanceof StartRefusedError)
          throw new CliError(error.message, EXIT[error.exit], error.code, error.fix);
        throw listenError(error as NodeJS.ErrnoException, flags.host, port);
      }
      const closed = closeOnSignal(server, info);
      info(dataDir ? `data dir: ${dataDir}` : 'data dir: none (everything is in --database and --storage)');
      if (databaseUrl) info(`database: ${databaseTarget?.kind === 'sqlite' ? databaseTarget.path : databaseUrl.text}`);
      // A registry grown onto --database leaves the data dir's own behind: say so, rather than seem to have lost it.
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
      for (const line of describeProxy(proxy)) info(line);
      const generated =
        (server as { generatedAdminToken?: string }).generatedAdminToken ??
        (adminTokenFile && !hadAdminTokenFile && existsSync(adminTokenFile)
          ? readFileSync(adminTokenFile, 'utf8').trim()
          : undefined);
      if (generated) info(`admin token (shown once; also in ${adminTokenFile}): ${generated}`);
      // Every later start says where it is: a first start that failed after generating it (a port in use) printed nothing.
      else if (adminTokenFile && server.liveFileAdminToken)
        info(`admin token: in ${adminTokenFile} (printed only when generated)`);
      // Only a live token: on a shared database that kept another, DIR/admin-token's is dead there.
      const live = server.liveFileAdminToken;
      if (adminTokenFile && dataDir === defaultDir && live && port === 0 && publicUrl === undefined) {
        // A picked port is this run's only: a profile pointing at it would send every later command to a dead port after a restart.
        info(
          `admin token not saved to a profile: --port 0 picked port ${new URL(url).port} for this run only; point commands at it with NODEREG_REGISTRY=${url} NODEREG_TOKEN=$(cat ${adminTokenFile}), or serve on a fixed --port to have it saved`,
        );
      } else if (adminTokenFile && dataDir === defaultDir && live) {
        await saveAdminToken(ctx, server.publicUrl(), live, adminTokenFile).catch((error: Error) =>
          ctx.out.warn(`could not save the admin token into the CLI config: ${error.message}`),
        );
      }

      // The one line on stdout, once the admin token is in place: scripts wait for it and read the URL.
      const listening = `nodereg registry listening on ${url}`;
      if (ctx.out.jsonLines) ctx.out.record('info', { message: listening, url }, ctx.stdout);
      else ctx.stdout.write(`${listening}\n`);

      if (flags.seed && empty) {
        const adminToken = ctx.env.NODEREG_ADMIN_TOKEN || generated;
        if (!adminToken) {
          ctx.out.warn('not seeding: no admin token is known (set NODEREG_ADMIN_TOKEN)');
        } else {
          const { seed } = await import('../seed.js');
          await seed(url, adminToken, ctx).catch((error: Error) => ctx.out.warn(`seeding failed: ${error.message}`));
        }
      }

      await closed;
    });
  addProxyFlags(command);
  examples(command, [
    'nodereg serve',
    'nodereg serve --port 0 --data-dir ./registry-data --log json',
    'nodereg serve --host 0.0.0.0 --public-url https://registry.example.com --review manual',
    'NODEREG_IMG_API_KEY=... nodereg serve --img-upstream https://img.provider.example --callback-allow hooks.example.com',
  ]);
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
  if (name !== 'default') ctx.out.hint(`use it with --profile ${name} (or NODEREG_PROFILE=${name})`);
}

/**
 * Runs until SIGINT or SIGTERM, then lets in-flight requests finish (the stalled ones are cut, and all within CLOSE_MAX_MS) and closes the database. The
 * handlers stay installed until the server is closed: a module that re-raises signals (conf's
 * write-file helper does) must not end the process halfway through closing.
 */
function closeOnSignal(server: RegistryServer, info: (line: string) => void): Promise<void> {
  return new Promise((resolveClosed, rejectClosed) => {
    let closing = false;
    const stop = (signal: NodeJS.Signals) => {
      if (closing) return;
      closing = true;
      info(
        `${signal}: closing (in-flight requests finish first; one whose connection moves nothing for ${CLOSE_STALLED_MS / 1000} s is cut, every one left after ${CLOSE_MAX_MS / 1000} s; SIGKILL stops at once)`,
      );
      server.close().then(
        () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          info('closed');
          resolveClosed();
        },
        (error: unknown) => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          rejectClosed(error);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
