// Archives in and out (DESIGN.md §3): the signed upload of a published version, and its download.
import { Readable } from 'node:stream';
import type { HttpBindings } from '@hono/node-server';
import { CONTENT_SHA256_HEADER, contentSha256Problem } from '../../contract/upload.js';
import { archiveOverLimit } from '../../contract/size.js';
import { downloadArchive, uploadArchive } from '../../contract/registry.js';
import { normalizeVersion } from '../../contract/version.js';
import { lockedVersion, readableNode } from '../access.js';
import { requestedRange } from '../archives/range.js';
import { verifyUploadSignature } from '../archives/signing.js';
import { validateZip } from '../archives/validate-zip.js';
import type { RouteModule } from '../context.js';
import { badRequest, banned, conflict, forbidden, HttpError, notFound, tooLarge } from '../errors.js';
import { mediaRefusal, route } from '../route.js';
import { STALE_CLAIM_MS, type RegistryStore } from '../store/registry-store.js';
import { archiveKey, versionView } from '../views.js';

/**
 * An answer given before the body is read: the connection closes after it, and the rest of the body
 * is only dropped within DROP (server/index.ts: closeAfter), never read to keep the connection alive.
 */
function early(error: HttpError): HttpError {
  return new HttpError(error.code, error.message, error.details, error.hint, { ...error.headers, Connection: 'close' });
}

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

/**
 * A URL signed for a token takes an upload only while that token could still publish it: not revoked
 * (removing a member revokes the PATs they made), and a user token's user still a member (or an admin).
 */
async function stillPublishing(store: RegistryStore, tokenId: string, publisherId: string): Promise<void> {
  const token = await store.getToken(tokenId);
  if (!token || token.revoked_at) throw early(forbidden('the token that published this version has been revoked since; publish it again with a live token for a fresh upload URL'));
  if (token.kind === 'pat' || (await store.getRole(publisherId, token.user_id)) || (await store.getUser(token.user_id))?.admin) return;
  throw early(forbidden(`the user who published this version is no longer a member of publisher ${publisherId}; a member must publish it again for a fresh upload URL`));
}

export const registerUploadRoutes: RouteModule = (app, ctx) => {
  const { store, archives } = ctx;

  route(app, ctx, uploadArchive, async ({ c, params }) => {
    // 415 and 413 before anything is read, then the signature (this route's credential), checked now.
    const refused = mediaRefusal('zip', c);
    if (refused) throw early(refused);
    const length = c.req.header('content-length');
    if (length !== undefined && Number(length) > ctx.options.maxArchive) {
      throw early(tooLarge(archiveOverLimit(Number(length), ctx.options.maxArchive)));
    }
    const declaredSize = c.req.query('size');
    const declaredSha256 = c.req.query('sha256');
    const declared = declaredSize !== undefined || declaredSha256 !== undefined ? { size: declaredSize ?? '', sha256: declaredSha256 ?? '' } : undefined;
    const tokenId = c.req.query('token_id');
    const verdict = verifyUploadSignature(ctx.keys.upload, params.versionId, c.req.query('expires') ?? '', c.req.query('signature') ?? '', Date.now(), declared, tokenId);
    if (verdict === 'expired') throw early(forbidden('the upload URL has expired; publish the version again for a fresh one'));
    if (verdict !== 'ok') throw early(forbidden('the upload URL is not valid for this version (bad signature)'));
    // A URL signed for a declared archive takes that archive only (its size and SHA-256 were signed by us).
    const notDeclared = (what: string) =>
      badRequest(`${what} differs from the archive declared when the version was published; publish the version again to declare this archive`);
    if (declared && length !== undefined && length !== declared.size) throw early(notDeclared(`the archive's size (${length} bytes)`));

    const version = await store.getVersionById(params.versionId);
    if (!version) throw early(notFound(`version ${params.versionId} not found`));
    const node = (await store.getNode(version.node_id))!;
    const publisher = (await store.getPublisher(node.publisher_id))!;
    if (publisher.status === 'PublisherStatusBanned') throw early(banned(`publisher ${publisher.id} is banned`));
    if (node.status === 'NodeStatusBanned') throw early(banned(`node ${node.id} is banned`));
    if (tokenId !== undefined) await stillPublishing(store, tokenId, publisher.id);
    const expected = c.req.header(CONTENT_SHA256_HEADER);
    const malformed = contentSha256Problem(expected);
    if (malformed) throw early(badRequest(malformed));
    if (declared && expected !== undefined && expected.toLowerCase() !== declared.sha256) throw early(notDeclared(`the archive's SHA-256 (${CONTENT_SHA256_HEADER})`));
    if (version.archive_sha256 !== null) {
      throw early(conflict(`version ${version.version} of node ${node.id} already has an archive`, 'publish a new version number'));
    }
    if (version.status !== 'NodeVersionStatusPending') throw early(lockedVersion(version));
    // A full scan queue (or this publisher's share of it) refuses at once, before the body is read (checked again when the scan starts).
    const busy = ctx.scanUpload.refusal(publisher.id);
    if (busy) throw early(busy);

    // Streamed from the Node request to a temporary file with backpressure; never buffered whole. What
    // the upload holds in memory, here and in the check, counts against the upload budget.
    const incoming = (c.env as HttpBindings).incoming;
    let received;
    let summary;
    try {
      received = await archives.receive(incoming, ctx.options.maxArchive, ctx.uploadMemory);
    } catch (error) {
      throw error instanceof HttpError ? early(error) : error;
    }
    try {
      if (expected !== undefined && expected.toLowerCase() !== received.sha256) {
        throw badRequest(`the archive's SHA-256 is ${received.sha256}, not the ${expected} sent in ${CONTENT_SHA256_HEADER}; the upload was damaged, try again`);
      }
      if (declared && (String(received.size) !== declared.size || received.sha256 !== declared.sha256)) {
        throw notDeclared(`the archive received (${received.size} bytes, SHA-256 ${received.sha256})`);
      }
      summary = await validateZip(received.tempPath, { maxUnpacked: ctx.options.maxUnpacked, memory: ctx.uploadMemory });
    } catch (error) {
      await archives.discard(received);
      throw error;
    }
    // The store decides who stores the archive: of racing uploads exactly one claims the version. The
    // file goes into place after the claim and the record follows it, so an upload cut by a crash
    // anywhere in between is rolled back at start (archives/claims.ts) and can be retried.
    const key = archiveKey(publisher.id, node.id, version.version);
    try {
      // The database may fail here (it may have gone away while the body came in): the file goes too.
      const claimed = await store.claimArchive(version.id, key).catch(async (error: unknown) => {
        await archives.discard(received);
        throw error;
      });
      if (!claimed) {
        await archives.discard(received);
        // An admin may have banned or flagged it while the archive was on its way.
        const now = await store.getVersionById(version.id);
        if (now && now.archive_sha256 === null && now.status !== 'NodeVersionStatusPending') throw lockedVersion(now);
        if (now && now.archive_sha256 === null) {
          throw conflict(
            `another upload of version ${version.version} of node ${node.id} is in progress`,
            `retry once it has ended; an upload cut short by a server that died holds the version for up to ${STALE_CLAIM_MS / 60_000} minutes`,
          );
        }
        throw conflict(`version ${version.version} of node ${node.id} already has an archive`, 'publish a new version number');
      }
      try {
        // Scanned in a worker thread once the claim is ours (racing uploads do not all scan); a high
        // finding under `--scan flag` makes the version Flagged, with the findings kept (DESIGN.md §10).
        const scan = await ctx.scanUpload.scan(received.tempPath, summary.scannable, `${node.id} ${version.version}`, publisher.id, summary.compiled);
        const status = scan?.flag ? 'NodeVersionStatusFlagged' : ctx.options.review === 'auto' ? 'NodeVersionStatusActive' : 'NodeVersionStatusPending';
        // The node classes it defines, read statically in a worker too (DESIGN.md §12), whatever the scan mode.
        const classes = await ctx.scanUpload.classes(received.tempPath, summary.scannable, node.id, publisher.id);
        await archives.commit(received, key);
        const updated = await store.recordArchive(version.id, {
          sha256: received.sha256, size: received.size, status, statusReason: scan?.flag, findings: scan?.findings, classes,
        });
        // The uploader holds the URL that publishing gave a member: it sees the findings.
        return versionView(updated, publisher.id, ctx.publicUrl(), true);
      } catch (error) {
        // Each step even when the one before fails (the storage that failed may fail the removal too):
        // the claim must go, or a retry is refused as a conflict. A retry's PUT replaces any leftover.
        await archives.discard(received).catch(() => {});
        await archives.remove(key).catch(() => {});
        await store.releaseArchive(version.id).catch(() => {});
        throw error;
      }
    } finally {
      // The memory of the entries' bytes the check kept for the scan, whatever happened (a lost claim, a store error).
      summary.release();
    }
  });

  route(app, ctx, downloadArchive, async ({ c, params, principal }) => {
    const { node, access } = await readableNode(store, principal, params.nodeId);
    if (node.publisher_id !== params.publisherId) throw notFound(`node ${node.id} is not a node of publisher ${params.publisherId}`);
    const version = await store.getVersion(node.id, normalizeVersion(params.version)?.version ?? params.version);
    // Active versions are public; the others only to the publisher's members and admins.
    const visible = version && (version.status === 'NodeVersionStatusActive' || access.member);
    if (!visible || version.archive_sha256 === null) throw notFound(`no archive for version ${params.version} of node ${node.id}`);
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
      'Content-Disposition': `attachment; filename="${node.id}-${version.version}.zip"`,
    };
    if (range) headers['Content-Range'] = `bytes ${range.start}-${range.end}/${total}`;
    // A download counts once the whole archive has been handed to the connection: not at /install,
    // not for a part (a range), a HEAD or a transfer the client broke off. A response whose connection
    // closed first may still emit 'finish' (the body stream, cancelled with a read pending, ends it),
    // so a destroyed one does not count.
    if (!range && c.req.method === 'GET' && version.status === 'NodeVersionStatusActive') {
      const outgoing = (c.env as HttpBindings).outgoing;
      outgoing.once('finish', () => {
        if (!outgoing.destroyed) void store.countDownload(node.id).catch(() => {});
      });
    }
    return new Response(pullStream(archive.stream), { status: range ? 206 : 200, headers });
  });
};
