import type { Metrics } from './metrics.js';
import type { Hono } from 'hono';
import type { ResolvedOptions } from './options.js';
import type { AppEnv, RouteDeps } from './route.js';
import type { ServerKeys } from './secrets.js';
import type { ArchiveStorage } from './archives/storage.js';
import type { TaskStore } from './proxy/store.js';
import type { RegistryStore } from './store/registry-store.js';
import type { UploadScanner } from './scan-upload.js';
import type { NodeAnswers } from './node-answers.js';
import type { VersionLists } from './version-lists.js';
import type { MemoryBudget } from './archives/validate-zip.js';
import type { Mirror } from './mirror/service.js';
import type { OidcVerifier } from './trusted/oidc.js';
import type { SigningKey } from './trusted/signing-key.js';
import type { WebhookDispatcher } from './webhooks/deliveries.js';

/** What every group of routes gets from the server factory. */
export interface ServerContext extends RouteDeps {
  /** The registry's metrics (GET /metrics). */
  metrics: Metrics;
  /** The AI proxy's tasks, results and callback deliveries. */
  tasks: TaskStore;
  /** Users, tokens, publishers, nodes, versions and reviews. */
  store: RegistryStore;
  /** The kept answers of `GET /nodes/{id}`, current by the node's generation. */
  nodeAnswers: NodeAnswers;
  /** The kept answers of `GET /nodes/{id}/versions` without findings, current by the node's generation. */
  versionLists: VersionLists;
  /** The archives of uploaded versions (DIR/archives). */
  archives: ArchiveStorage;
  options: ResolvedOptions;
  keys: ServerKeys;
  /** The URL clients reach the server at, without a trailing slash. */
  publicUrl(): string;
  log(line: string): void;
  /** Scans an uploaded archive in a worker thread, as `--scan` says (undefined under `off`). */
  scanUpload: UploadScanner;
  /** The bytes uploads hold in memory, all together (`uploadMemory`). */
  uploadMemory: MemoryBudget;
  /** Trusted publishing: the OIDC issuers by name, their tokens' verifier, and the provenance key. */
  trust: { issuers: Record<string, string>; oidc: OidcVerifier; signing: SigningKey };
  /** Work to finish before the database closes (timers, pending deliveries). */
  onClose(task: () => void | Promise<void>): void;
  /** Sends the events of publishers' versions to their webhooks, never waited for. */
  webhooks: WebhookDispatcher;
  /** The upstream registry this one mirrors (`serve --upstream`), if any. */
  mirror?: Mirror;
}

/** A group of routes: one file under routes/, listed in routes/index.ts. */
export type RouteModule = (app: Hono<AppEnv>, ctx: ServerContext) => void;
