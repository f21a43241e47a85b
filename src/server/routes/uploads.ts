// Archives in and out (DESIGN.md §3): the signed upload of a published version (services/archive-intake.ts),
// and its download.
import { Readable } from 'node:stream';
import type { HttpBindings } from '@hono/node-server';
import { CONTENT_SHA256_HEADER } from '../../contract/upload.js';
import { downloadArchive, uploadArchive } from '../../contract/registry.js';
import { normalizeVersion } from '../../contract/version.js';
import { readableNode } from '../access.js';
import { requestedRange } from '../archives/range.js';
import type { RouteModule } from '../context.js';
import { closesConnection, notFound } from '../errors.js';
import { mediaRefusal, route } from '../route.js';
import { intakeArchive } from '../services/archive-intake.js';
import { archiveKey, versionView } from '../views.js';
import { clientAddress } from '../http/client-address.js';
import { downloadSeen } from '../services/download-count.js';
import { createUploadSlots } from '../services/upload-slots.js';

/** A Node stream as a web stream that reads only as fast as the client takes it (backpressure). */
function pullStream(stream: Readable): ReadableStream<Uint8Array> {
  const chunks = stream[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(value as Uint8Array);
      },
      cancel() {
        stream.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}

export const registerUploadRoutes: RouteModule = (app, ctx) => {
  const { store, archives, keys } = ctx;
  // The uploads in progress on this server, per version and per publisher.
  const slots = createUploadSlots(ctx.options.uploads);

  // Parse → the archive intake service → the version as the uploader sees it (with its findings).
  route(app, ctx, uploadArchive, async ({ c, params }) => {
    // 415 before anything is read: the connection closes after it.
    const refused = mediaRefusal('zip', c);
    if (refused) throw closesConnection(refused);
    const { version, publisherId } = await intakeArchive(
      ctx,
      {
        versionId: params.versionId,
        query: c.req.query(),
        length: c.req.header('content-length'),
        sha256: c.req.header(CONTENT_SHA256_HEADER),
        body: (c.env as HttpBindings).incoming,
      },
      slots,
    );
    return versionView(version, publisherId, ctx.publicUrl(), true);
  });

  route(app, ctx, downloadArchive, async ({ c, params, principal }) => {
    const { node, access } = await readableNode(store, principal, params.nodeId);
    if (node.publisher_id !== params.publisherId)
      throw notFound(`node ${node.id} is not a node of publisher ${params.publisherId}`);
    const version = await store.getVersion(node.id, normalizeVersion(params.version)?.version ?? params.version);
    // Active versions are public; the others only to the publisher's members and admins.
    const visible = version && (version.status === 'NodeVersionStatusActive' || access.member);
    if (!visible || version.archive_sha256 === null)
      throw notFound(`no archive for version ${params.version} of node ${node.id}`);
    const etag = `"${version.archive_sha256}"`;
    if (c.req.header('if-none-match') === etag) return new Response(null, { status: 304, headers: { ETag: etag } });
    // A range is honoured for this very archive only (If-Range names it by its ETag).
    const ifRange = c.req.header('if-range');
    const size = version.archive_size ?? 0;
    const range = ifRange === undefined || ifRange === etag ? requestedRange(c.req.header('range'), size) : undefined;
    const archive = await archives.open(archiveKey(node.publisher_id, node.id, version.version), range);
    if (!archive) throw notFound(`the archive of version ${version.version} of node ${node.id} is missing`);
    // The size the storage gave, or the one recorded (an S3-compatible server may answer without Content-Length).
    const total = Number.isSafeInteger(archive.size) ? archive.size : size;
    const headers: Record<string, string> = {
      'Content-Type': 'application/zip',
      'Content-Length': String(range ? range.end - range.start + 1 : total),
      'Accept-Ranges': 'bytes',
      ETag: etag,
      [CONTENT_SHA256_HEADER]: version.archive_sha256,
      'Content-Disposition': `attachment; filename="${node.id}-${version.version}.zip"`,
    };
    if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${total}`;
    // A download counts once the whole archive has been handed to the connection: not at /install,
    // not for a part (a range), a HEAD or a transfer the client broke off. A response whose connection
    // closed first may still emit 'finish' (the body stream, cancelled with a read pending, ends it),
    // so a destroyed one does not count. One client's downloads of a version count once a day.
    if (!range && c.req.method === 'GET' && version.status === 'NodeVersionStatusActive') {
      const outgoing = (c.env as HttpBindings).outgoing;
      const seen = downloadSeen(keys.upload, clientAddress(c), node.id, version.version);
      outgoing.once('finish', () => {
        if (!outgoing.destroyed) void store.countDownload(node.id, seen).catch(() => {});
      });
    }
    return new Response(pullStream(archive.stream), { status: range ? 206 : 200, headers });
  });
};
