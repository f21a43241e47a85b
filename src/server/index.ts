// The registry server's factory: options → backends (database, archives, keys) → start-up work →
// the app (src/server/app.ts) → the node:http server with its connection guards (src/server/http/).
// `serve` and the tests share it; it returns an unstarted server.
import { createWebhookDispatcher } from './webhooks/deliveries.js';
import { join } from 'node:path';
import type { Hono } from 'hono';
import {
  CLOSE_MAX_MS,
  CLOSE_STALLED_MS,
  DEFAULT_MAX_ARCHIVE,
  DEFAULT_MAX_UNPACKED,
  DEFAULT_PORT,
} from '../shared/tuning.js';
import { bootstrapAdmin, createAuthenticate, resolveAdminToken } from './accounts/admin.js';
import { appListener, buildApp } from './app.js';
import { rollBackArchiveClaims } from './archives/claims.js';
import { claimStorage } from './archives/registry-claim.js';
import { createLocalArchiveStorage, type ArchiveStorage } from './archives/storage.js';
import { MemoryBudget, UPLOAD_MEMORY_MAX } from './archives/validate-zip.js';
import type { ServerContext } from './context.js';
import { createMetrics, measuredScanner, timedStorage, timedStore } from './metrics.js';
import { prepareDataDir, recordStorage, refuseIncompleteBackup, refuseLostDatabase } from './data-dir.js';
import { createHttpServer } from './http/index.js';
import { createNodeAnswers } from './node-answers.js';
import type { RegistryServerOptions, ResolvedOptions } from './options.js';
import { createTaskStore } from './proxy/store.js';
import { bodyBudget, type AppEnv } from './route.js';
import { createUploadScanner } from './scan-upload.js';
import { loadKeys, type ServerKeys } from './secrets.js';
import { openDatabase, type Db } from './store/db.js';
import type { RegistryStore } from './store/registry-store.js';
import { createSqliteRegistryStore } from './store/sqlite-registry-store.js';
import { createVersionLists } from './version-lists.js';
import { createMirror, type MirrorOptions } from './mirror/service.js';
import { DEFAULT_OIDC_ISSUERS, EXCHANGED_TOKEN_PREFIX } from '../contract/trust.js';
import { exchangedPrincipal } from './services/trusts.js';
import { createOidcVerifier } from './trusted/oidc.js';
import { signingKey } from './trusted/signing-key.js';
import { DEFAULT_CREATION_CAPS } from './services/creation-caps.js';
import { limitRepeats, REPEATED_WARNING_MS } from './repeated-warnings.js';

export type { RegistryServerOptions, ResolvedOptions } from './options.js';

export interface RegistryServer {
  app: Hono<AppEnv>;
  /** The embedded SQLite database; undefined when `database` was given. */
  db: Db | undefined;
  store: RegistryStore;
  archives: ArchiveStorage;
  keys: ServerKeys;
  /** The budget of the bytes uploads hold in memory (`uploadMemory`). */
  uploadMemory: MemoryBudget;
  /**
   * The admin token generated into DIR/admin-token on this start (first start without `adminToken`), once
   * listening: print it once. None when a shared database kept the admin token it had.
   */
  generatedAdminToken: string | undefined;
  /**
   * DIR/admin-token's token (generated or read), once listening, when this start made it the admin's
   * live token: a CLI profile may keep it. None when a shared database kept another, or `adminToken` was given.
   */
  liveFileAdminToken: string | undefined;
  options: ResolvedOptions;
  /** Starts listening; resolves to the URL it listens on. */
  listen(): Promise<string>;
  /** The public URL (after listen when not set). */
  publicUrl(): string;
  /** Stops accepting, lets in-flight requests finish (within `closeTimeout`), closes the database. */
  close(): Promise<void>;
}

const withDefaults = (input: RegistryServerOptions): ResolvedOptions => ({
  host: '127.0.0.1',
  port: DEFAULT_PORT,
  review: 'auto',
  maxArchive: DEFAULT_MAX_ARCHIVE,
  maxUnpacked: DEFAULT_MAX_UNPACKED,
  version: '0.0.0',
  ...input,
  caps: { ...DEFAULT_CREATION_CAPS, ...input.caps },
  log: input.log && limitRepeats(input.log, input.repeatedWarningEvery ?? REPEATED_WARNING_MS),
});

/** The database, archive storage and keys: those given, else the embedded defaults in the data dir. */
function openBackends(options: ResolvedOptions) {
  const { dataDir } = options;
  if (dataDir === undefined && !(options.database?.secret && options.archives && options.adminToken)) {
    throw new Error(
      'without a data dir, the server needs a database that keeps the secret, an archive storage and the admin token',
    );
  }
  if (dataDir !== undefined) {
    prepareDataDir(dataDir);
    refuseIncompleteBackup(dataDir, !options.database);
    if (!options.database) refuseLostDatabase(dataDir);
  }
  // The secret before the database: a serve starting on the same new dir meanwhile never finds a
  // registry.db without its secret (which it refuses as a backup cut short).
  const keys = loadKeys(dataDir, options.database?.secret);
  // (dataDir is set whenever an embedded default is used)
  const db = options.database ? undefined : openDatabase(join(dataDir!, 'registry.db'), options.log);
  const database = options.database ?? {
    store: createSqliteRegistryStore(db!),
    tasks: createTaskStore(db!),
    close: () => db!.close(),
  };
  const archives = options.archives ?? createLocalArchiveStorage(join(dataDir!, 'archives'));
  // Each call to the database and the storage timed (GET /metrics).
  const metrics = createMetrics();
  return {
    keys,
    db,
    database: { ...database, store: timedStore(database.store, metrics) },
    archives: timedStorage(archives, metrics),
    metrics,
  };
}

/**
 * The work before the first request: the admin's token in place, leftover files swept, uploads cut
 * short by a crash rolled back. Requests wait for it (listen() too).
 */
function startUp(options: ResolvedOptions, store: RegistryStore, archives: ArchiveStorage) {
  const admin = resolveAdminToken(options.dataDir, options.adminToken);
  const state = { adminLive: true };
  const shared = Boolean(options.database?.shared);
  // The storage's claim first: nothing is written or removed in another registry's storage.
  const ready = store
    .registryId()
    .then(async (id) => {
      await claimStorage(archives, id);
      if (options.dataDir !== undefined) recordStorage(options.dataDir, { registry: id, archives: archives.location });
    })
    .then(() =>
      Promise.all([
        bootstrapAdmin(store, admin, options.dataDir, { shared, rotate: options.rotateAdminToken }, options.log).then(
          (live) => void (state.adminLive = live),
        ),
        archives.sweep(),
        rollBackArchiveClaims(store, archives, { shared }).then((count) => {
          if (count) options.log?.(`rolled back ${count} upload(s) cut short by a crash; they can be uploaded again`);
        }),
      ]),
    );
  ready.catch(() => {});
  return { admin, state, ready };
}

/** At close: the repeated warnings counted but not yet logged are logged. */
const flushWarnings = (options: ResolvedOptions) => () =>
  (options.log as { flush?: () => void } | undefined)?.flush?.();

/** The publishers' webhooks of this server, stopped when it closes. */
function startWebhooks(store: RegistryStore, options: RegistryServerOptions, closers: (() => void | Promise<void>)[]) {
  const webhooks = createWebhookDispatcher({
    store,
    log: (line, level) => options.log?.(line, level),
    userAgent: `nodereg/${options.version ?? '0.0.0'}`,
    options: options.webhooks,
  });
  closers.push(() => webhooks.close());
  return webhooks;
}

/** The mirror of `serve --upstream`, receiving archives within this server's budget. */
function mirrorOf(ctx: ServerContext, upstream: MirrorOptions) {
  const { archives, publicUrl, uploadMemory, options } = ctx;
  const log = (line: string, level?: 'warn' | 'error') => options.log?.(line, level);
  return createMirror({ archives, publicUrl, maxArchive: options.maxArchive, uploadMemory, log }, upstream);
}

/** Builds an unstarted registry server; `serve` and the tests share it. */
export function createRegistryServer(input: RegistryServerOptions): RegistryServer {
  const options = withDefaults(input);
  const { keys, db, database, archives, metrics } = openBackends(options);
  const { store, tasks } = database;
  const { admin, state, ready } = startUp(options, store, archives);
  let listeningUrl = '';
  const publicUrl = () => (options.publicUrl ?? listeningUrl).replace(/\/+$/, '');
  const closers: (() => void | Promise<void>)[] = [flushWarnings(options)];
  const storeAuthenticate = createAuthenticate(store);
  const issuers = { ...DEFAULT_OIDC_ISSUERS, ...options.oidcIssuers };
  const trust = {
    issuers,
    signing: signingKey(keys.provenance),
    oidc: createOidcVerifier({
      issuers,
      audience: () => options.oidcAudience ?? publicUrl(),
      timeoutMs: options.oidcTimeout ?? 5000,
      cooldownMs: options.oidcCooldown ?? 30_000,
    }),
  };
  const ctx: ServerContext = {
    webhooks: startWebhooks(store, options, closers),
    tasks,
    store,
    archives,
    options,
    keys,
    authenticate: async (token: string) => {
      await ready;
      return token.startsWith(EXCHANGED_TOKEN_PREFIX) ? exchangedPrincipal(store, token) : storeAuthenticate(token);
    },
    trust,
    publicUrl,
    nodeAnswers: createNodeAnswers(store, publicUrl),
    versionLists: createVersionLists(publicUrl),
    log: options.log ?? (() => {}),
    onClose: (task) => closers.push(task),
    scanUpload: measuredScanner(
      createUploadScanner(options.scan ?? 'flag', (line) => options.log?.(line), options.scanLimits),
      metrics,
    ),
    metrics,
    uploadMemory: new MemoryBudget(options.uploadMemory ?? UPLOAD_MEMORY_MAX),
    bodies: bodyBudget(),
  };
  closers.push(async () => void (await ctx.scanUpload.close()));
  if (options.upstream) ctx.mirror = mirrorOf(ctx, options.upstream);
  const app = buildApp(ctx);
  const accessLog = options.accessLog === undefined ? options.log : options.accessLog || undefined;
  const requestTimeout = options.requestTimeout ?? 60 * 60 * 1000;
  const http = createHttpServer(appListener(app, ctx), {
    requestTimeout,
    headersTimeout: options.headersTimeout ?? 60_000,
    closeTimeout: options.closeTimeout ?? CLOSE_MAX_MS,
    closeStalled: options.closeStalled ?? CLOSE_STALLED_MS,
    log: options.log,
    // Refused before any route: the access log has its line too, without the method and path it never read.
    logRefusal: accessLog,
  });

  return {
    app,
    db,
    store,
    archives,
    keys,
    uploadMemory: ctx.uploadMemory,
    get generatedAdminToken() {
      return admin.generated && state.adminLive ? admin.token : undefined;
    },
    get liveFileAdminToken() {
      return !admin.given && state.adminLive ? admin.token : undefined;
    },
    options,
    publicUrl,
    listen: async () => {
      await ready;
      const { port } = await http.listen(options.port, options.host);
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      listeningUrl = `http://${host}:${port}`;
      return listeningUrl;
    },
    close: async () => {
      await http.close();
      for (const task of closers) await task();
      await database.close();
      await archives.close?.();
    },
  };
}
