// The steps of publish that reach the registry: the publish request (creating the publisher when
// asked), then the upload of the archive, each telling what a failure leaves behind.
import { createReadStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, NetworkError } from '../../client/index.js';
import { routes } from '../../client/routes.js';
import { NODE_ID_TAKEN_HINT, nodeIdTaken } from '../../contract/errors.js';
import { TOKEN_PREFIX } from '../../contract/limits.js';
import type { NodeVersion, PublishResponse } from '../../contract/resources.js';
import type { PublishRequest } from '../../package/manifest.js';
import type { ArchiveResult } from '../../package/zip.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, toCliError } from '../errors.js';
import { ARCHIVE_HINT, type leftBehind, progressBar, untilInterrupted } from './left-behind.js';
import type { PublishOptions } from './options.js';

/** What the sending steps share: the run's context, the registry, the request and the step's signal. */
export interface Sending {
  ctx: Ctx;
  client: Client;
  request: PublishRequest;
  publisherId: string;
  options: PublishOptions;
  signal: AbortSignal;
  left: ReturnType<typeof leftBehind>;
}

export const isConflict = (error: unknown) => (error as { status?: number })?.status === 409;

/** Sends the publish request; 'exists' when the registry has this version already. */
export async function sendPublish(s: Sending, body: PublishRequest['body']): Promise<PublishResponse | 'exists'> {
  const { client, request, publisherId, signal, left } = s;
  // The body was checked with the manifest (contract/requests.ts): sent without loading the schemas.
  const publish = () => client.call(routes.publishVersion, { params: { publisherId, nodeId: request.nodeId }, body });
  try {
    return await untilInterrupted(
      signal,
      publish().catch(async (error: unknown) => {
        if (!(await publisherMissing(client, error, publisherId))) throw error;
        await createPublisher(s);
        return publish();
      }),
    );
  } catch (error) {
    if (signal.aborted) throw left.interrupted(signal.reason, 'before the registry answered the publish', true);
    if (isConflict(error)) return 'exists';
    // Sent, but no answer came (a timeout, a reset after the retries): the registry may have registered the version.
    if (error instanceof NetworkError) throw left.unanswered(toCliError(error));
    throw toCliError(error, { 413: ARCHIVE_HINT });
  }
}

/** The publisher is missing: created with --create-publisher, unless the node id is another's. */
async function createPublisher({ ctx, client, request, publisherId, options }: Sending): Promise<void> {
  if (!options.createPublisher) {
    // an access token can neither create a publisher nor publish for another than its own
    const pat = (await ctx.connection()).token?.startsWith(TOKEN_PREFIX.pat);
    throw new CliError(
      `publisher "${publisherId}" does not exist on ${client.baseUrl}`,
      EXIT.notFound,
      'not_found',
      pat
        ? `this access token publishes for its own publisher only (\`nodereg whoami\` names it): give that id with --publisher or in pyproject.toml; to create ${publisherId}, run \`nodereg publisher create ${publisherId}\` with a user token (nrg_u_…)`
        : `create it with \`nodereg publisher create ${publisherId}\`, or publish with --create-publisher`,
      404,
    );
  }
  // A node id another publisher holds would be refused once the new publisher exists: create nothing.
  // A banned node answers 403 to all but admins, and with our publisher missing it is someone else's.
  const taken = await client.call(routes.getNode, { params: { nodeId: request.nodeId } }).then(
    (node) =>
      node.publisher?.id && node.publisher.id !== publisherId
        ? nodeIdTaken(request.nodeId, node.publisher.id)
        : undefined,
    (error: { status?: number }) => (error?.status === 403 ? nodeIdTaken(request.nodeId) : undefined),
  );
  if (taken) throw new CliError(taken, EXIT.auth, 'forbidden', NODE_ID_TAKEN_HINT, 403);
  // An id the manifest checked. A 409: made meanwhile (another job of this release); the publish decides whether it is ours.
  const created = await client.call(routes.createPublisher, { body: { id: publisherId } }).then(
    () => true,
    (failure: unknown) => {
      if (!isConflict(failure)) throw failure;
      return false;
    },
  );
  if (created) ctx.out.success(`created publisher ${publisherId}`);
}

/** Uploads the archive at `path` to the URL the publish answered; 'exists' when another archive is there. */
export async function uploadArchive(
  s: Sending,
  signedUrl: string,
  upload: { path: string; archive: ArchiveResult; retryWindowMs: number },
): Promise<NodeVersion | 'exists'> {
  const { ctx, client, request, signal, left } = s;
  const { archive } = upload;
  const bar = progressBar(ctx);
  try {
    return await client.upload(signedUrl, {
      open: () => createReadStream(upload.path),
      size: archive.size,
      sha256: archive.sha256,
      onProgress: bar.update,
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw left.uploadInterrupted(signal.reason);
    // The registry may have an archive all the same: ours, from an attempt whose answer was lost, or
    // that of another job publishing this version at once (a 409 while its upload is checked: waited for).
    const existing = await versionAfterUpload(client, request, isConflict(error) ? upload.retryWindowMs : 0, signal);
    if (signal.aborted) throw left.uploadInterrupted(signal.reason);
    if (existing?.archive_sha256 === archive.sha256) return existing;
    if (existing?.archive_sha256 || (isConflict(error) && !existing)) return 'exists';
    // No archive yet: nothing arrived, or another upload holds the version (or held it when its server died).
    throw left.uploadFailed(toCliError(error));
  } finally {
    bar.end();
  }
}

/**
 * The version as the registry has it after a failed upload; undefined when it cannot be read. With
 * `waitMs` (another upload holds the version: the retry window, as long as a restart is waited for),
 * read again until it has an archive, for that long.
 */
async function versionAfterUpload(
  client: Client,
  request: { nodeId: string; version: string },
  waitMs: number,
  signal: AbortSignal,
) {
  const until = Date.now() + waitMs;
  for (let delay = 300; ; delay = Math.min(delay * 2, 2000)) {
    const read = client.call(routes.getNodeVersion, { params: { nodeId: request.nodeId, version: request.version } });
    const version = await untilInterrupted(signal, read).catch(() => undefined); // a signal stops the retries of a registry that is down
    if (
      !version ||
      version.archive_sha256 ||
      version.status !== 'NodeVersionStatusPending' ||
      Date.now() + delay > until ||
      signal.aborted
    )
      return version;
    await sleep(delay, undefined, { signal }).catch(() => {});
  }
}

/** A 404 on publish is about the publisher in the path; asked again to tell it from an unknown route. */
async function publisherMissing(client: Client, error: unknown, publisherId: string): Promise<boolean> {
  if ((error as { status?: number })?.status !== 404) return false;
  try {
    await client.call(routes.getPublisher, { params: { publisherId } });
    return false;
  } catch (again) {
    return (again as { status?: number })?.status === 404;
  }
}
