// The flags of `nodereg serve`, each declared once here, with what it sets in the registry server's options.
// Adding a flag is a change to this file only: its field in ServeFlags, its option in addServeOptions,
// and, when the server takes it, its value in serverSettings (checked before anything starts). Its
// environment variable and config file key derive from its name (sources.ts).
import { type Command, Option } from 'commander';
import type { RegistryServerOptions } from '../../server/options.js';
import { SCAN_MODES } from '../../shared/scan.js';
import { DEFAULT_PG_POOL, DEFAULT_PORT } from '../../shared/tuning.js';
import { DEFAULT_UPLOAD_LIMITS } from '../../server/services/upload-slots.js';
import { backendOption } from '../backend-urls.js';
import { dataDirOption } from '../data-dir.js';
import { addProxyFlags, type ProxyFlags, proxyOptionsFromFlags } from '../proxy-flags.js';
import {
  parseCaps,
  parseHost,
  parseTrustProxy,
  parsePort,
  parseUploadLimits,
  parsePublicUrl,
  parseRateLimit,
  parseSizeFlag,
} from './values.js';
import { addUpstreamFlags, type UpstreamFlags } from './upstream-flags.js';
import { CONFIG_FLAG, describeSources } from './sources.js';
import { addOidcFlags, type OidcFlags, oidcOptionsFromFlags } from './oidc-flags.js';

/** The flags as commander hands them to the action. */
export interface ServeFlags extends ProxyFlags, UpstreamFlags, OidcFlags {
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
  pgPool: string;
  caps?: string;
  uploadsPerVersion: string;
  uploadsPerPublisher: string;
  uploadMinRate: string;
  uploadGrace: string;
  trustProxy?: string;
  log: 'pretty' | 'json' | 'off';
  seed?: boolean;
  migrateOnly?: boolean;
  rotateAdminToken?: boolean;
  config?: string;
}

const LOG_FORMATS = ['pretty', 'json', 'off'] as const;

/** The caps on uploads in progress and the least rate of a body (services/upload-slots.ts). */
function addUploadFlags(command: Command): Command {
  return command
    .option(
      '--uploads-per-version <n>',
      'uploads of one version in progress at once; another is refused at once (409, Retry-After)',
      String(DEFAULT_UPLOAD_LIMITS.perVersion),
    )
    .option(
      '--uploads-per-publisher <n>',
      "uploads of one publisher's versions in progress at once; another is refused at once (429, Retry-After)",
      String(DEFAULT_UPLOAD_LIMITS.perPublisher),
    )
    .option(
      '--upload-min-rate <size>',
      "the least an upload's body must send a second, measured over each --upload-grace; a slower one is cut (408); 0: none",
      `${DEFAULT_UPLOAD_LIMITS.minRate / 1024}KiB`,
    )
    .option(
      '--upload-grace <duration>',
      'how long an upload may send before its rate is first measured (and the window it is measured over)',
      `${DEFAULT_UPLOAD_LIMITS.graceMs / 1000}s`,
    );
}

/** Where the registry keeps its data: the data dir, the database and the archive storage. */
function addStorageOptions(command: Command): Command {
  return command
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
      '--pg-pool <n>',
      'connections each instance opens to PostgreSQL at most (with --database postgres://…)',
      String(DEFAULT_PG_POOL),
    );
}

export function addServeOptions(command: Command): Command {
  addStorageOptions(
    command
      .option('--host <host>', 'interface to listen on', '127.0.0.1')
      .option('--port <port>', 'port to listen on; 0 picks a free port', String(DEFAULT_PORT)),
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
        '--trust-proxy <list>',
        'addresses or CIDR blocks of proxies in front of this server (comma-separated): behind them the client address, for the log, the rate limit and download counts, is the nearest untrusted one in X-Forwarded-For',
      ),
    )
    .addOption(
      new Option(
        '--caps <list>',
        'what one account may create, as WORD=N pairs: publishers (one user owns, default 10), nodes (one publisher holds, 1000), pending (versions of one publisher waiting for their archive, 100), invitations (one publisher has out, 100); admins are not capped',
      ),
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
    .option(
      '--rotate-admin-token',
      "make NODEREG_ADMIN_TOKEN the admin's token of a shared database that holds another (that one stops working on every instance); without it such a start is refused",
    );
  addOidcFlags(addUpstreamFlags(addProxyFlags(addUploadFlags(command))));
  command.option(
    `${CONFIG_FLAG} <file>`,
    'a TOML file of settings: each key is a flag\'s name without -- (max-archive = "1GiB"); a flag beats its environment variable, which beats the file',
  );
  describeSources(command);
  return command;
}

/** What the flags set in the registry server's options, the way the server takes it. */
export type ServeSettings = Required<
  Pick<RegistryServerOptions, 'host' | 'port' | 'review' | 'scan' | 'maxArchive' | 'maxUnpacked' | 'proxy'>
> &
  Pick<
    RegistryServerOptions,
    'publicUrl' | 'rateLimit' | 'caps' | 'uploads' | 'trustProxy' | 'upstream' | 'oidcIssuers' | 'oidcAudience'
  >;

/** Checks every flag the server takes before anything starts; the first bad one is a usage error. */
export function serverSettings(flags: ServeFlags, env: NodeJS.ProcessEnv): ServeSettings {
  const port = parsePort(flags.port);
  const maxArchive = parseSizeFlag('--max-archive', flags.maxArchive);
  const maxUnpacked = parseSizeFlag('--max-unpacked', flags.maxUnpacked);
  const rateLimit = flags.rateLimit === undefined ? undefined : parseRateLimit(flags.rateLimit);
  const caps = flags.caps === undefined ? undefined : parseCaps(flags.caps);
  const trustProxy = flags.trustProxy === undefined ? undefined : parseTrustProxy(flags.trustProxy);
  const uploads = parseUploadLimits(flags);
  const publicUrl = flags.publicUrl === undefined ? undefined : parsePublicUrl(flags.publicUrl);
  const host = parseHost(flags.host);
  const proxy = proxyOptionsFromFlags(flags, env);
  const oidc = oidcOptionsFromFlags(flags);
  return {
    host,
    port,
    publicUrl,
    review: flags.review,
    scan: flags.scan,
    maxArchive,
    maxUnpacked,
    rateLimit,
    caps,
    uploads,
    trustProxy,
    proxy,
    ...oidc,
  };
}
