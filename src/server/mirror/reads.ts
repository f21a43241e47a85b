// The reads the mirror answers: a node read this registry answers 404 for, of a node id it does not
// hold (in any status) and, for an archive, of a publisher it does not have, is answered from upstream
// (mirror/service.ts). Local names always win: such reads never reach upstream.
import { Readable } from 'node:stream';
import type { Context, MiddlewareHandler } from 'hono';
import type { ServerContext } from '../context.js';
import { HttpError } from '../errors.js';
import type { AppEnv } from '../route.js';
import { INDEX_KEY, publisherOf, type MirrorEntry } from './cache.js';
import { createMirror, ORIGIN_HEADER, STALE_HEADER, type Mirror, type MirrorRead } from './service.js';
import { asHttpError, UpstreamError, type UpstreamVersion } from './upstream.js';

type Read =
  | { kind: 'class'; className: string; nodeId?: undefined }
  | { kind: 'node' | 'versions' | 'install'; nodeId: string }
  | { kind: 'version'; nodeId: string; version: string }
  | { kind: 'archive'; publisherId: string; nodeId: string; version: string };

const NODE_READ = /^\/nodes\/([^/]+)(?:\/(versions|install))?(?:\/([^/]+))?$/;
const ARCHIVE_READ = /^\/archives\/([^/]+)\/([^/]+)\/([^/]+)\/node\.zip$/;
const CLASS_READ = /^\/comfy-nodes\/([^/]+)\/node$/;

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The mirror read a path asks for, if it is one. */
export function mirrorRead(path: string): Read | undefined {
  const archive = ARCHIVE_READ.exec(path);
  if (archive) {
    const [publisherId, nodeId, version] = archive.slice(1).map(decode);
    return publisherId && nodeId && version ? { kind: 'archive', publisherId, nodeId, version } : undefined;
  }
  const defining = CLASS_READ.exec(path);
  if (defining) {
    const className = decode(defining[1]!);
    return className ? { kind: 'class', className } : undefined;
  }
  const node = NODE_READ.exec(path);
  if (!node) return undefined;
  const [, id, sub, version] = node;
  const nodeId = decode(id!);
  if (!nodeId || nodeId === 'search') return undefined;
  if (sub === undefined) return version === undefined ? { kind: 'node', nodeId } : undefined;
  if (sub === 'install') return version === undefined ? { kind: 'install', nodeId } : undefined;
  const named = version === undefined ? undefined : decode(version);
  return named ? { kind: 'version', nodeId, version: named } : { kind: 'versions', nodeId };
}

/** A version as the mirror answers it: its download URL ours, its sha256 the pinned one. */
export function mirroredVersion(entry: MirrorEntry, version: UpstreamVersion, publicUrl: string): UpstreamVersion {
  const pinned = entry.archives[version.version];
  const path = [publisherOf(entry), entry.id, version.version].map(encodeURIComponent).join('/');
  return {
    ...version,
    downloadUrl: `${publicUrl}/archives/${path}/node.zip`,
    ...(pinned ? { archive_sha256: pinned.sha256, archive_size: pinned.size } : {}),
  };
}

/** The version `install` gives without a version: upstream's latest when the policy lets it through, else the newest Active one shown. */
export function latestOf(mirror: Mirror, entry: MirrorEntry): UpstreamVersion | undefined {
  const visible = mirror
    .visibleVersions(entry)
    .filter((v) => v.status === undefined || v.status === 'NodeVersionStatusActive');
  const named = entry.node.latest_version?.version;
  return visible.find((v) => v.version === named) ?? visible[0];
}

/** The node as the mirror answers it, marked as upstream's. */
export function mirroredNode(mirror: Mirror, entry: MirrorEntry, publicUrl: string) {
  const latest = latestOf(mirror, entry);
  const { latest_version: _upstreams, ...node } = entry.node;
  return {
    ...node,
    ...(latest ? { latest_version: mirroredVersion(entry, latest, publicUrl) } : {}),
    origin: 'upstream' as const,
  };
}

function json(body: unknown, read: MirrorRead): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: answerHeaders(read, 'application/json') });
}

function answerHeaders(read: MirrorRead, type: string): Record<string, string> {
  return {
    'Content-Type': type,
    [ORIGIN_HEADER]: 'upstream',
    ...(read.stale ? { [STALE_HEADER]: read.entry.fetched_at } : {}),
  };
}

/** The node upstream says defines a class, kept as any node read; a node id this registry holds is not upstream's to answer. */
async function definingNode(ctx: ServerContext, mirror: Mirror, className: string): Promise<string> {
  let id: string;
  try {
    id = (await mirror.upstream.classNode(className)).id;
  } catch (error) {
    if (error instanceof UpstreamError && error.kind === 'not_found')
      throw new HttpError(
        'not_found',
        `no node here or at the upstream registry ${mirror.url} defines the node class ${className}`,
      );
    throw asHttpError(error, className, mirror.url);
  }
  if (await ctx.store.getNode(id))
    throw new HttpError('not_found', `no node of this registry defines the node class ${className}`);
  return id;
}

async function answer(c: Context<AppEnv>, ctx: ServerContext, mirror: Mirror, asked: Read): Promise<Response> {
  const publicUrl = ctx.publicUrl();
  const nodeId = asked.kind === 'class' ? await definingNode(ctx, mirror, asked.className) : asked.nodeId;
  const read = await mirror.read(nodeId);
  const { entry } = read;
  if (await ctx.store.getPublisher(publisherOf(entry)))
    throw new HttpError(
      'not_found',
      `node ${nodeId} not found: upstream holds it under ${publisherOf(entry)}, a publisher of this registry, whose names are this registry's alone`,
    );
  switch (asked.kind) {
    case 'class':
    case 'node':
      return json(mirroredNode(mirror, entry, publicUrl), read);
    case 'versions': {
      const statuses = c.req.queries('statuses') ?? [];
      const shown = mirror.visibleVersions(entry).filter((v) => !statuses.length || statuses.includes(v.status ?? ''));
      return json(
        shown.map((v) => mirroredVersion(entry, v, publicUrl)),
        read,
      );
    }
    case 'version':
      return json(mirroredVersion(entry, mirror.findVersion(entry, asked.version), publicUrl), read);
    case 'install': {
      const asking = c.req.query('version');
      const version = asking ? mirror.findVersion(entry, asking) : latestOf(mirror, entry);
      if (!version || (version.status !== undefined && version.status !== 'NodeVersionStatusActive'))
        throw new HttpError('not_found', `node ${entry.id} has no active version to install`);
      return json(mirroredVersion(entry, version, publicUrl), read);
    }
    case 'archive': {
      if (publisherOf(entry) !== asked.publisherId)
        throw new HttpError('not_found', `node ${entry.id} is not a node of publisher ${asked.publisherId}`);
      const { opened, sha256 } = await mirror.openArchive(entry, asked.version);
      const headers = {
        ...answerHeaders(read, 'application/zip'),
        'Content-Length': String(opened.size),
        ETag: `"${sha256}"`,
        'Content-Disposition': `attachment; filename="${entry.id}-${asked.version}.zip"`,
      };
      return new Response(Readable.toWeb(opened.stream) as ReadableStream, { status: 200, headers });
    }
  }
}

/** The mirror of a cache kept in the archive storage, serving it offline; undefined when there is none. */
async function keptCache(ctx: ServerContext): Promise<Mirror | undefined> {
  if (!(await ctx.archives.exists(INDEX_KEY))) return undefined;
  const { archives, publicUrl, uploadMemory, log } = ctx;
  const deps = { archives, publicUrl, maxArchive: ctx.options.maxArchive, uploadMemory, log };
  return createMirror(deps, { url: 'none (the kept cache only)', offline: true });
}

const offlineMirrors = new WeakMap<ServerContext, Promise<Mirror | undefined>>();

/**
 * The mirror that answers for this registry: its upstream's (`--upstream`) or, without one, the cache
 * kept by the mirror this data dir was restored from, served as it is; undefined when there is neither.
 */
export function mirrorOf(ctx: ServerContext): Promise<Mirror | undefined> {
  if (ctx.mirror) return Promise.resolve(ctx.mirror);
  let offline = offlineMirrors.get(ctx);
  if (!offline) {
    // a storage that could not answer is asked again next time
    offline = keptCache(ctx).catch((error: Error) => {
      offlineMirrors.delete(ctx);
      ctx.log(`mirror: could not look for a kept cache: ${error.message}`);
      return undefined;
    });
    offlineMirrors.set(ctx, offline);
  }
  return offline;
}

/**
 * Runs after the routes: a 404 of a read the mirror answers, for a name this registry does not hold,
 * becomes the mirror's answer (or its error in our shape).
 */
export function mirrorReads(ctx: ServerContext): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    if (c.res.status !== 404 || (c.req.method !== 'GET' && c.req.method !== 'HEAD')) return;
    const asked = mirrorRead(new URL(c.req.url).pathname);
    if (!asked || (asked.kind === 'class' && !ctx.mirror)) return;
    const mirror = await mirrorOf(ctx);
    if (!mirror) return;
    if (asked.nodeId !== undefined && (await ctx.store.getNode(asked.nodeId))) return;
    if (asked.kind === 'archive' && (await ctx.store.getPublisher(asked.publisherId))) return;
    let response: Response;
    try {
      response = await answer(c, ctx, mirror, asked);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      response = new Response(JSON.stringify(error.body()), {
        status: error.status,
        headers: { 'Content-Type': 'application/json', ...error.headers },
      });
    }
    c.res = undefined;
    c.res = response;
  };
}
