import type { RouteModule } from '../context.js';
import { openapiDocument } from '../../contract/openapi.js';
import { MAX_ARCHIVE_ENTRIES, READY_STORAGE_KEEP_MS } from '../../contract/limits.js';
import { getLimits, health, metrics, openapiDocument as openapiOperation, ready } from '../../contract/registry.js';
import { forbidden } from '../errors.js';
import { route } from '../route.js';
import { StorageUnavailableError } from '../archives/storage.js';

/**
 * /readyz answers within its documented 5 s whatever the storage does: a check still running after
 * this is answered as the storage unavailable (503). The check goes on, and is kept once it settles.
 */
const READY_DEADLINE_MS = 4_500;

function withinReadyDeadline(check: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StorageUnavailableError(
            `the archive storage did not answer its check within ${READY_DEADLINE_MS / 1000} s`,
          ),
        ),
      READY_DEADLINE_MS,
    );
  });
  return Promise.race([check, late]).finally(() => clearTimeout(timer));
}

/** Liveness, readiness, the archive limits and the OpenAPI document. */
export const registerMetaRoutes: RouteModule = (app, ctx) => {
  // The storage's check, shared by the probes while it runs and kept a while after it settles (failed
  // too): a flood of /readyz costs the bucket one HEAD per READY_STORAGE_KEEP_MS, not one each.
  const keepMs = ctx.options.readyStorageKeep ?? READY_STORAGE_KEEP_MS;
  let check: { done: Promise<void>; settledAt?: number } | undefined;
  const storageReady = () => {
    if (!check || (check.settledAt !== undefined && Date.now() - check.settledAt >= keepMs)) {
      const next: { done: Promise<void>; settledAt?: number } = { done: ctx.archives.ready() };
      const settle = () => (next.settledAt = Date.now());
      next.done.then(settle, settle);
      check = next;
    }
    return check.done;
  };
  route(app, ctx, health, () => ({ ok: true, version: ctx.options.version }), { ignoreToken: true });
  // For a load balancer: a database or archive storage out of reach is the 503 every route answers then (index.ts).
  route(app, ctx, ready, async () => {
    await ctx.store.ping();
    await withinReadyDeadline(storageReady());
    return { ok: true, version: ctx.options.version };
  });
  // Admins only: route names, counts and latencies tell how the registry is used (docs/decisions.md).
  route(app, ctx, metrics, async ({ c, principal }) => {
    if (!principal?.admin) throw forbidden('only an admin may read the metrics');
    const text = await ctx.metrics.registry.metrics();
    return c.body(text, 200, { 'Content-Type': ctx.metrics.registry.contentType });
  });
  route(app, ctx, getLimits, () => ({
    max_archive: ctx.options.maxArchive,
    max_unpacked: ctx.options.maxUnpacked,
    max_entries: MAX_ARCHIVE_ENTRIES,
  }));
  // Built once per public URL, not per request: building it is costly enough that a few clients
  // fetching it without a token would hold the event loop and slow every other request (/healthz too).
  let kept: { url: string; json: string } | undefined;
  route(app, ctx, openapiOperation, ({ c }) => {
    const url = ctx.publicUrl();
    if (kept?.url !== url) kept = { url, json: JSON.stringify(openapiDocument(ctx.options.version ?? '0.0.0', url)) };
    return c.body(kept.json, 200, { 'Content-Type': 'application/json' });
  });
};
