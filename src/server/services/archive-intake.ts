// Archive intake: the upload of a published version's archive to its signed URL (DESIGN.md §3, §10).
// In order: the signed URL and what it declared, the version and who may still upload it (all before
// the body is read, so those refusals close the connection), the body to a temporary file with its
// checks, then the claim, the scan (scanAndRecord, the one place an upload is scanned) and the record.
import type { Readable } from 'node:stream';
import { CONTENT_SHA256_HEADER, contentSha256Problem } from '../../contract/upload.js';
import { archiveOverLimit } from '../../contract/size.js';
import { lockedVersion } from '../access.js';
import { verifyUploadSignature, type DeclaredArchive } from '../archives/signing.js';
import { ArchiveExistsError, type ArchiveStorage, type ReceivedArchive } from '../archives/storage.js';
import { validateZip, type MemoryBudget, type ZipSummary } from '../archives/validate-zip.js';
import { badRequest, banned, closesConnection, conflict, forbidden, HttpError, notFound, tooLarge } from '../errors.js';
import type { UploadScanner } from '../scan-upload.js';
import { approvedUpload } from './approvals.js';
import type { ServerKeys } from '../secrets.js';
import {
  CLAIM_HEARTBEAT_MS,
  STALE_CLAIM_MS,
  type NodeRow,
  type PublisherRow,
  type RegistryStore,
  type VersionRow,
} from '../store/registry-store.js';
import { archiveKey } from '../views.js';
import type { Job } from '../trusted/claims.js';
import { signedProvenance } from '../trusted/provenance.js';
import type { SigningKey } from '../trusted/signing-key.js';
import { exchangedJob } from './trusts.js';
import { rateWatch, type UploadLimits, type UploadSlots } from './upload-slots.js';

export interface IntakeDeps {
  store: RegistryStore;
  archives: ArchiveStorage;
  keys: Pick<ServerKeys, 'upload'>;
  scanUpload: UploadScanner;
  uploadMemory: MemoryBudget;
  options: { maxArchive: number; maxUnpacked: number; review: 'auto' | 'manual'; uploads?: UploadLimits };
  log: (line: string, level?: 'warn' | 'error') => void;
  /** Signs the provenance of an archive published with an exchanged token. */
  trust: { signing: SigningKey };
  publicUrl(): string;
}

/** An upload as the route parsed it. */
export interface UploadRequest {
  versionId: string;
  /** The signed URL's query: expires, signature, and the declared size, SHA-256 and token, if any. */
  query: { expires?: string; signature?: string; size?: string; sha256?: string; token_id?: string };
  /** Content-Length, as sent. */
  length: string | undefined;
  /** X-Content-SHA256, as sent. */
  sha256: string | undefined;
  body: Readable;
}

/** Where an upload goes: the version, its node and its publisher. */
interface Target {
  version: VersionRow;
  node: NodeRow;
  publisher: PublisherRow;
  /** The CI job whose exchanged token published the version: its provenance is recorded. */
  job: Job | undefined;
}

const notDeclared = (what: string) =>
  badRequest(
    `${what} differs from the archive declared when the version was published; publish the version again to declare this archive`,
  );

/** Checks the signed URL (this route's credential) and the length sent; returns what the URL declared. */
function checkSignedUrl(deps: IntakeDeps, request: UploadRequest): DeclaredArchive | undefined {
  const { query, length } = request;
  if (length !== undefined && Number(length) > deps.options.maxArchive)
    throw tooLarge(archiveOverLimit(Number(length), deps.options.maxArchive));
  const declared =
    query.size !== undefined || query.sha256 !== undefined
      ? { size: query.size ?? '', sha256: query.sha256 ?? '' }
      : undefined;
  const verdict = verifyUploadSignature(
    deps.keys.upload,
    request.versionId,
    query.expires ?? '',
    query.signature ?? '',
    Date.now(),
    declared,
    query.token_id,
  );
  if (verdict === 'expired') throw forbidden('the upload URL has expired; publish the version again for a fresh one');
  if (verdict !== 'ok') throw forbidden('the upload URL is not valid for this version (bad signature)');
  // A URL signed for a declared archive takes that archive only (its size and SHA-256 were signed by us).
  if (declared && length !== undefined && length !== declared.size)
    throw notDeclared(`the archive's size (${length} bytes)`);
  return declared;
}

/** Checks the X-Content-SHA256 sent: its form, and that it is the declared archive's. */
function checkSentSha256(request: UploadRequest, declared: DeclaredArchive | undefined): void {
  const malformed = contentSha256Problem(request.sha256);
  if (malformed) throw badRequest(malformed);
  if (declared && request.sha256 !== undefined && request.sha256.toLowerCase() !== declared.sha256) {
    throw notDeclared(`the archive's SHA-256 (${CONTENT_SHA256_HEADER})`);
  }
}

/**
 * A URL signed for a token takes an upload only while that token could still publish it: not revoked
 * (removing a member revokes the PATs they made), and a user token's user still a member (or an admin).
 */
async function stillPublishing(store: RegistryStore, tokenId: string, publisherId: string): Promise<void> {
  const token = await store.getToken(tokenId);
  if (!token || token.revoked_at)
    throw forbidden(
      'the token that published this version has been revoked since; publish it again with a live token for a fresh upload URL',
    );
  if (
    token.kind === 'pat' ||
    (await store.getRole(publisherId, token.user_id)) ||
    (await store.getUser(token.user_id))?.admin
  )
    return;
  throw forbidden(
    `the user who published this version is no longer a member of publisher ${publisherId}; a member must publish it again for a fresh upload URL`,
  );
}

/** The version to upload, if it may take an archive now (and the scan queue has room for it). */
async function findTarget(
  deps: IntakeDeps,
  request: UploadRequest,
  declared: DeclaredArchive | undefined,
): Promise<Target> {
  const { store } = deps;
  const version = await store.getVersionById(request.versionId);
  if (!version) throw notFound(`version ${request.versionId} not found`);
  const node = (await store.getNode(version.node_id))!;
  const publisher = (await store.getPublisher(node.publisher_id))!;
  if (publisher.status === 'PublisherStatusBanned') throw banned(`publisher ${publisher.id} is banned`);
  if (node.status === 'NodeStatusBanned') throw banned(`node ${node.id} is banned`);
  const job = await exchangedJob(store, request.query.token_id);
  if (request.query.token_id !== undefined && !job) await stillPublishing(store, request.query.token_id, publisher.id);
  checkSentSha256(request, declared);
  if (version.archive_sha256 !== null) {
    throw conflict(
      `version ${version.version} of node ${node.id} already has an archive`,
      'publish a new version number',
    );
  }
  if (version.status !== 'NodeVersionStatusPending') throw lockedVersion(version);
  // A full scan queue (or this publisher's share of it) refuses at once (checked again when the scan starts).
  const busy = deps.scanUpload.refusal(publisher.id);
  if (busy) throw busy;
  return { version, node, publisher, job };
}

/**
 * The body streamed to a temporary file with backpressure (never buffered whole), checked against
 * what was sent and declared, and read as a zip within the limits. What the upload holds in memory
 * counts against the upload budget.
 */
async function receiveChecked(deps: IntakeDeps, request: UploadRequest, declared: DeclaredArchive | undefined) {
  let received: ReceivedArchive;
  // A body slower than the least rate is cut (408), so that slow uploads do not hold descriptors.
  const watch = rateWatch(request.body, deps.options.uploads);
  try {
    received = await deps.archives.receive(request.body, deps.options.maxArchive, deps.uploadMemory, watch.signal);
  } catch (error) {
    throw error instanceof HttpError ? closesConnection(error) : error;
  } finally {
    watch.stop();
  }
  try {
    const expected = request.sha256?.toLowerCase();
    if (expected !== undefined && expected !== received.sha256) {
      throw badRequest(
        `the archive's SHA-256 is ${received.sha256}, not the ${request.sha256} sent in ${CONTENT_SHA256_HEADER}; the upload was damaged, try again`,
      );
    }
    if (declared && (String(received.size) !== declared.size || received.sha256 !== declared.sha256)) {
      throw notDeclared(`the archive received (${received.size} bytes, SHA-256 ${received.sha256})`);
    }
    const summary = await validateZip(received.tempPath, {
      maxUnpacked: deps.options.maxUnpacked,
      memory: deps.uploadMemory,
    });
    return { received, summary };
  } catch (error) {
    await deps.archives.discard(received);
    throw error;
  }
}

/** The answer to a lost claim: another upload holds the version, or has stored it, or it changed status meanwhile. */
async function lostClaim(store: RegistryStore, { version, node }: Target): Promise<HttpError> {
  // An admin may have banned or flagged it while the archive was on its way.
  const now = await store.getVersionById(version.id);
  if (now && now.archive_sha256 === null && now.status !== 'NodeVersionStatusPending') return lockedVersion(now);
  if (now && now.archive_sha256 === null) {
    return conflict(
      `another upload of version ${version.version} of node ${node.id} is in progress`,
      `retry once it has ended; an upload cut short by a server that died holds the version for up to ${STALE_CLAIM_MS / 60_000} minutes (an admin can release it at once: nodereg admin release-claim ${node.id} ${version.version})`,
    );
  }
  return conflict(
    `version ${version.version} of node ${node.id} already has an archive`,
    'publish a new version number',
  );
}

/**
 * Scans the archive in a worker thread and records it: a high finding under `--scan flag` makes the
 * version Flagged, with the findings kept (DESIGN.md §10), unless an admin approved them all for the
 * node before; else Active under auto review.
 */
async function scanAndRecord(
  deps: IntakeDeps,
  { version, node, publisher, job }: Target,
  received: ReceivedArchive,
  summary: ZipSummary,
  key: string,
) {
  const scan = await deps.scanUpload.scan(
    received.tempPath,
    summary.scannable,
    `${node.id} ${version.version}`,
    publisher.id,
    summary.compiled,
    summary.loadable,
  );
  // findings an admin approved for this node in an earlier version do not flag it again
  const approved = await approvedUpload(deps.store, node.id, scan);
  const flag = approved ? undefined : scan?.flag;
  const status = flag
    ? 'NodeVersionStatusFlagged'
    : deps.options.review === 'auto'
      ? 'NodeVersionStatusActive'
      : 'NodeVersionStatusPending';
  // The node classes it defines, read statically in a worker too (DESIGN.md §12), whatever the scan mode.
  const classes = await deps.scanUpload.classes(received.tempPath, summary.scannable, node.id, publisher.id);
  await commitClaimed(deps, received, key);
  return deps.store.recordArchive(version.id, {
    sha256: received.sha256,
    size: received.size,
    status,
    statusReason: flag ?? approved,
    findings: scan?.findings,
    classes,
    provenance: job
      ? signedProvenance(
          deps.trust.signing,
          { publisherId: publisher.id, nodeId: node.id, version: version.version, sha256: received.sha256 },
          job,
          deps.publicUrl(),
        )
      : undefined,
  });
}

/**
 * Puts the archive in place. This upload holds the version's claim and no archive is recorded for it, so
 * an object already at its key (with other bytes: commit never replaces one) is what an upload that died
 * after its put left: it goes, and the commit is tried once more.
 */
async function commitClaimed(deps: IntakeDeps, received: ReceivedArchive, key: string): Promise<void> {
  try {
    await deps.archives.commit(received, key);
  } catch (error) {
    if (!(error instanceof ArchiveExistsError)) throw error;
    deps.log(`removing ${deps.archives.where(key)}, left by an upload that died before it was recorded`, 'warn');
    await deps.archives.remove(key);
    await deps.archives.commit(received, key);
  }
}

/**
 * Stores a received archive. The store decides who stores it: of racing uploads exactly one claims the
 * version (and only it scans). The file goes into place after the claim and the record follows it, so
 * an upload cut by a crash anywhere in between is rolled back at start (archives/claims.ts).
 */
async function storeArchive(
  deps: IntakeDeps,
  target: Target,
  received: ReceivedArchive,
  summary: ZipSummary,
): Promise<VersionRow> {
  const { store, archives } = deps;
  const key = archiveKey(target.publisher.id, target.node.id, target.version.version);
  // The database may fail here (it may have gone away while the body came in): the file goes too.
  const claimed = await store.claimArchive(target.version.id, key).catch(async (error: unknown) => {
    await archives.discard(received);
    throw error;
  });
  if (!claimed) {
    await archives.discard(received);
    throw await lostClaim(store, target);
  }
  // Renewed while it scans and puts, so the claim runs out soon after a crash, never during a slow put.
  const heartbeat = setInterval(
    () => void store.renewArchiveClaim(target.version.id, key).catch(() => {}),
    CLAIM_HEARTBEAT_MS,
  );
  heartbeat.unref();
  try {
    return await scanAndRecord(deps, target, received, summary, key);
  } catch (error) {
    // Each step even when the one before fails: the claim must go, or a retry is refused as a conflict.
    await archives.discard(received).catch(() => {});
    await archives.remove(key).catch(() => {});
    await store.releaseArchive(target.version.id).catch(() => {});
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * Takes the upload of a version's archive; returns the version as recorded and its publisher. A
 * refusal before the body is read closes the connection (the rest of the body is only dropped).
 */
export async function intakeArchive(
  deps: IntakeDeps,
  request: UploadRequest,
  slots?: UploadSlots,
): Promise<{ version: VersionRow; publisherId: string }> {
  let declared: DeclaredArchive | undefined;
  let target: Target;
  let release = () => {};
  try {
    declared = checkSignedUrl(deps, request);
    target = await findTarget(deps, request, declared);
    const { version, node, publisher } = target;
    if (slots)
      release = slots.take({
        versionId: version.id,
        nodeId: node.id,
        version: version.version,
        publisherId: publisher.id,
      });
  } catch (error) {
    throw error instanceof HttpError ? closesConnection(error) : error;
  }
  try {
    const { received, summary } = await receiveChecked(deps, request, declared);
    try {
      return { version: await storeArchive(deps, target, received, summary), publisherId: target.publisher.id };
    } finally {
      // The memory of the entries' bytes the check kept for the scan, whatever happened.
      summary.release();
    }
  } finally {
    release();
  }
}
