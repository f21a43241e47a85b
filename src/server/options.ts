// What createRegistryServer takes (src/server/index.ts), and the same with its defaults filled in.
import type { BlockList } from 'node:net';
import type { ArchiveStorage } from './archives/storage.js';
import type { MirrorOptions } from './mirror/service.js';
import type { ProxyOptions } from './proxy/options.js';
import type { TaskStore } from './proxy/store.js';
import type { ScanLimits, ScanMode } from './scan-upload.js';
import type { ServerLog } from './repeated-warnings.js';
import type { RegistryStore } from './store/registry-store.js';
import type { CreationCaps } from './services/creation-caps.js';
import type { UploadLimits } from './services/upload-slots.js';
import type { WebhookOptions } from './webhooks/deliveries.js';

export interface RegistryServerOptions {
  /**
   * Where the embedded defaults keep their files (database, archives, secret, admin token). Optional
   * only when `database` holds the secret, `archives` is given and `adminToken` is set: a stateless instance.
   */
  dataDir?: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** The URL clients reach this server at (download and upload URLs are built on it). Default: the listening URL. */
  publicUrl?: string;
  review?: 'auto' | 'manual';
  maxArchive?: number;
  maxUnpacked?: number;
  /** Proxies whose X-Forwarded-For is believed (`serve --trust-proxy`): the client address is found behind them. */
  trustProxy?: BlockList;
  /** Mutating requests per minute per user (else per address); off when undefined. */
  rateLimit?: number;
  /** Uploads in progress at once per version and per publisher, and the least rate of a body (`serve --upload-*`); each unset one takes DEFAULT_UPLOAD_LIMITS's. */
  uploads?: UploadLimits;
  /** What one account may create (`serve --caps`); each unset cap takes DEFAULT_CREATION_CAPS's. */
  caps?: Partial<CreationCaps>;
  /**
   * Server events and internal errors (stderr in `serve`); none when undefined. A level marks what went
   * wrong; a kind marks a warning that repeats (an outage's 503s), logged at most once per `repeatedWarningEvery`;
   * a request id, the request a line is about (the error its answer reports).
   */
  log?: ServerLog;
  /** How often a repeating warning is logged again, with the count of those left out, in ms. Default REPEATED_WARNING_MS (60 s). */
  repeatedWarningEvery?: number;
  /** One line per request (`serve --log`): by default to `log`; `false` for none. */
  accessLog?: ((line: string) => void) | false;
  version?: string;
  /** The admin's token (NODEREG_ADMIN_TOKEN); generated into DIR/admin-token on first start when unset. */
  adminToken?: string;
  /**
   * On a shared database that holds another live admin token: make `adminToken` the admin's (the other
   * stops working on every instance). Without it such a start is refused (`serve --rotate-admin-token`).
   */
  rotateAdminToken?: boolean;
  /** How long a request's headers may take to arrive, in ms; then 408. Default 60 s. */
  headersTimeout?: number;
  /**
   * How long a whole request may take to arrive, body included, in ms; then 408. Default 1 hour: Node's
   * 5 minutes would cut a maximum-size archive on a slow link.
   */
  requestTimeout?: number;
  /**
   * How long close() may wait for requests in flight, in ms; then every connection left is cut. Default
   * CLOSE_MAX_MS (60 s): a client trickling bytes is never cut as stalled, and would hold the stop for up
   * to the request timeout.
   */
  closeTimeout?: number;
  /** While closing, a connection that moves no byte this long (ms) is cut. Default CLOSE_STALLED_MS (10 s). */
  closeStalled?: number;
  /** How long /readyz keeps the answer of its archive storage check (ms). Default READY_STORAGE_KEEP_MS (5 s). */
  readyStorageKeep?: number;
  /** The AI proxy: upstreams (forward mode) or the sandbox, callbacks. DESIGN.md §4. */
  proxy?: ProxyOptions;
  /**
   * The database, when not the embedded default (SQLite in DIR/registry.db): the registry's store and
   * the proxy's tasks, and how to close them (after the last request).
   */
  database?: {
    store: RegistryStore;
    tasks: TaskStore;
    close(): void | Promise<void> /** The server's secret, when the database keeps it. */;
    secret?: Buffer /** Other instances may use it at the same time. */;
    shared?: boolean;
  };
  /** Where archives live, when not the embedded default (DIR/archives). */
  archives?: ArchiveStorage;
  /** The URLs `database` and `archives` were opened from: a 503's log line names the one out of reach (password masked). */
  backendUrls?: { database?: string; storage?: string };
  /**
   * The scan of uploaded archives (DESIGN.md §10): `flag` (default) makes a version with a high or
   * critical finding Flagged, `warn` only keeps the findings, `off` scans nothing.
   */
  scan?: ScanMode;
  /** How long a scan may take and how much heap its worker may use (defaults: 10 minutes, 512 MiB). */
  scanLimits?: ScanLimits;
  /**
   * Bytes uploads may hold in memory, all together (receive buffers, archives read whole, entries kept
   * for the scan); past it an upload takes small buffers and the file path. Default: UPLOAD_MEMORY_MAX
   * (64 MiB), this server's own.
   */
  uploadMemory?: number;
  /** Publishers' webhooks: private receivers allowed (`serve --webhook-allow-private`), time per attempt, retry backoff. */
  webhooks?: WebhookOptions;
  /** The upstream registry to mirror (`serve --upstream`, DESIGN.md §13); none when undefined. */
  upstream?: MirrorOptions;
  /** OIDC issuers by name → issuer URL, added to (or replacing) DEFAULT_OIDC_ISSUERS (`--oidc-issuer NAME=URL`). */
  oidcIssuers?: Record<string, string>;
  /** The `aud` OIDC tokens must carry; default the public URL. */
  oidcAudience?: string;
  /** How long fetching an issuer's keys may take, in ms; default 5 s. */
  oidcTimeout?: number;
  /** After fetching an issuer's keys, how long a token signed by an unknown key waits to fetch them again, in ms; default 30 s. */
  oidcCooldown?: number;
}

/** The options with their defaults (host, port, review mode, archive limits). */
export type ResolvedOptions = Required<
  Pick<RegistryServerOptions, 'host' | 'port' | 'review' | 'maxArchive' | 'maxUnpacked'>
> &
  Omit<RegistryServerOptions, 'caps'> & { caps: CreationCaps };
