import { appendFileSync, createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { NetworkError, type Client } from '../../client/index.js';
import { routes } from '../../client/routes.js';
import { TOKEN_PREFIX } from '../../contract/limits.js';
import { DEFAULT_MAX_ARCHIVE } from '../../shared/tuning.js';
import { formatSize } from '../../contract/size.js';
import { NODE_ID_TAKEN_HINT, nodeIdTaken } from '../../contract/errors.js';
import type { Node, NodeVersion, PublishResponse, RegistryLimits } from '../../contract/resources.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, exitCodeForSignal, exitCodesHelp, toCliError } from '../errors.js';
import { shellWord } from '../invocation.js';
import { table } from '../output.js';
import {
  buildArchive, fileTable, listFiles, loadChecked, parseMaxSize, readChangelog, statusWord, warnUncommitted, withCleanup, type ChangelogFlags,
} from '../project.js';
import { fetchLimits, limitProblems, LIMITS_HINT } from '../registry-limits.js';
import type { ArchiveResult } from '../../package/zip.js';
import type { ScanSeverity } from '../../contract/scan.js';
import { blocking, failOnOption, findingsError, scanProject, unscannedText } from '../findings.js';
import { examples } from '../examples.js';

/** The options of publish, as commander gives them. */
export interface PublishOptions extends ChangelogFlags {
  failOn: ScanSeverity;
  acceptFindings?: boolean;
  dryRun?: boolean;
  skipExisting?: boolean;
  publisher?: string;
  createPublisher?: boolean;
  maxSize?: string;
}

/** The documented `--json` object of publish (DESIGN.md §5). */
interface PublishReport {
  publisher_id: string;
  node_id: string;
  version: string;
  status: string;
  download_url: string | null;
  archive_sha256: string;
  archive_size: number;
  files: number;
  /** true when --skip-existing found the version already published (nothing was uploaded). */
  skipped: boolean;
}

const EXISTS_HINT = 'bump the version in pyproject.toml, or pass --skip-existing to treat the same version with the same archive as success';

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('publish [dir]')
    .description('validate, pack and publish the node in dir (default: the current directory), then upload its archive')
    .option('--dry-run', 'validate and pack, then print the request and the file list; send nothing')
    .option('--skip-existing', 'a version already published with the same archive is success (exit 0); with another archive, or withdrawn (deleted), it is exit 3')
    .option('--changelog <text>', 'changelog of this version (else env NODEREG_CHANGELOG)')
    .option('--changelog-file <file>', 'read the changelog from a file (- for stdin)')
    .option('--publisher <id>', 'publisher id (overrides [tool.nodereg] publisher and [tool.comfy] PublisherId)')
    .option('--create-publisher', 'create the publisher first if it does not exist (needs a user token)')
    .option('--max-size <size>', `fail when the archive is larger (default ${formatSize(DEFAULT_MAX_ARCHIVE)})`)
    .addOption(failOnOption(program))
    .option('--accept-findings', 'publish even when the scan finds something at or above --fail-on (the registry may still flag the version)')
    .action((dir: string | undefined, options: PublishOptions) => publishProject(ctx, dir, options))
    .addHelpText('after', exitCodesHelp('publish'));
  examples(command, [
    'nodereg publish --dry-run',
    'NODEREG_TOKEN=... nodereg publish --skip-existing --changelog-file CHANGELOG.md',
    'nodereg publish ./my-node --publisher my-team --create-publisher',
    'nodereg publish --fail-on critical',
  ]);
}

/** `nodereg publish [dir]`. */
export async function publishProject(ctx: Ctx, dir: string | undefined, options: PublishOptions): Promise<void> {
  const maxSize = parseMaxSize(options.maxSize, DEFAULT_MAX_ARCHIVE);
  const retryWindowMs = ctx.retryWindow().ms; // a bad --retry-window stops the run before the pack, as a bad --max-size does
  const changelog = await readChangelog(ctx, options);
  const project = await loadChecked(ctx, dir, { requirePublisher: true, publisher: options.publisher, changelog });
  const { request } = project;
  const publisherId = request.publisherId!;
  // The registry's limits are asked for while the project is scanned and packed: a read that says
  // nothing of the node. Its answer, or its error (no token, a dead registry), counts only after
  // the scan has passed, in the order the steps have always failed in.
  const registry = options.dryRun ? undefined : settledLater(ctx.client({ requireToken: true }).then(async (client) => ({ client, limits: await fetchLimits(client) })));
  const temp = mkdtempSync(join(tmpdir(), 'nodereg-publish-'));
  let requestSent = false;
  await withCleanup(async (interrupts) => {
    // Both local: the packer's reads, large files and worker threads proceed while the scan parses
    // on this thread. The scan still decides first, and nothing of the node reaches the registry before it passes.
    const [scanned, packed] = await Promise.allSettled([scanProject(project, true), buildArchive(ctx, project, join(temp, 'node.zip'), maxSize)]);
    if (scanned.status === 'rejected') throw scanned.reason;
    const scan = scanned.value;
    const stopping = blocking(scan, options.failOn);
    if (stopping.length && !options.acceptFindings) throw findingsError(stopping, options.failOn, true);
    for (const f of scan.findings.filter((x) => !x.suppressed)) ctx.out.warn(`scan: ${f.file}:${f.line} ${f.severity} ${f.rule}: ${f.message}`);
    for (const s of scan.skipped ?? []) ctx.out.warn(`scan: ${s.file} ${s.severity} ${unscannedText(s)}`);
    if (!options.dryRun) warnUncommitted(ctx, project);
    if (packed.status === 'rejected') throw packed.reason;
    const archive = packed.value;
    // The archive is declared, so a registry refuses one over its limits before the version exists.
    const body = { ...request.body, node_version: { ...request.body.node_version, archive_size: archive.size, archive_sha256: archive.sha256 } };
    if (options.dryRun) {
      const { registry } = await ctx.connection();
      const { buildPath } = await import('../../contract/operation.js');
      const path = buildPath(routes.publishVersion.path, { publisherId, nodeId: request.nodeId });
      const fileList = listFiles(project);
      ctx.out.result(
        {
          dry_run: true,
          registry,
          publisher_id: publisherId,
          node_id: request.nodeId,
          version: request.version,
          request: { method: 'POST', path, body },
          archive_sha256: archive.sha256,
          archive_size: archive.size,
          files: archive.files,
          file_list: fileList,
        },
        () =>
          `POST ${registry}${path}\n${JSON.stringify(body, null, 2)}\n\n` +
          `${archive.files} file${archive.files === 1 ? '' : 's'}, ${formatSize(archive.unpackedSize)} → archive ${formatSize(archive.size)}, sha256 ${archive.sha256}\n` +
          fileTable(fileList),
      );
      ctx.out.info('dry run: nothing was sent');
      return;
    }

    const { client, limits } = await registry!.catch((error: unknown) => {
      throw toCliError(error);
    });
    checkLimits(client, limits, archive, request);
    // The body was checked with the manifest (contract/requests.ts): sent without loading the schemas.
    const publish = () => client.call(routes.publishVersion, { params: { publisherId, nodeId: request.nodeId }, body });
    const left = leftBehind(request, client.baseUrl, resumeCommand(ctx, dir, options));

    const outcome = await interrupts.caught(async (signal) => {
      requestSent = true; // from here a signal aborts this step, which says what it leaves
      let published;
      try {
        published = await untilInterrupted(signal, publish().catch(async (error: unknown) => {
          if (!(await publisherMissing(client, error, publisherId))) throw error;
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
            (node) => (node.publisher?.id && node.publisher.id !== publisherId ? nodeIdTaken(request.nodeId, node.publisher.id) : undefined),
            (error: { status?: number }) => (error?.status === 403 ? nodeIdTaken(request.nodeId) : undefined),
          );
          if (taken) throw new CliError(taken, EXIT.auth, 'forbidden', NODE_ID_TAKEN_HINT, 403);
          // An id the manifest checked. A 409: made meanwhile (another job of this release); the publish decides whether it is ours.
          const created = await client.call(routes.createPublisher, { body: { id: publisherId } }).then(() => true, (failure: unknown) => {
            if (!isConflict(failure)) throw failure;
            return false;
          });
          if (created) ctx.out.success(`created publisher ${publisherId}`);
          return publish();
        }));
      } catch (error) {
        if (signal.aborted) throw left.interrupted(signal.reason, 'before the registry answered the publish', true);
        if (isConflict(error)) return 'exists' as const;
        // Sent, but no answer came (a timeout, a reset after the retries): the registry may have registered the version.
        if (error instanceof NetworkError) throw left.unanswered(toCliError(error));
        throw toCliError(error, { 413: ARCHIVE_HINT });
      }

      const bar = progressBar(ctx);
      try {
        return await client.upload(published.signedUrl, {
          open: () => createReadStream(join(temp, 'node.zip')),
          size: archive.size,
          sha256: archive.sha256,
          onProgress: bar.update,
          signal,
        });
      } catch (error) {
        if (signal.aborted) throw left.uploadInterrupted(signal.reason);
        // The registry may have an archive all the same: ours, from an attempt whose answer was lost, or
        // that of another job publishing this version at once (a 409 while its upload is checked: waited for).
        const existing = await versionAfterUpload(client, request, isConflict(error) ? retryWindowMs : 0, signal);
        if (signal.aborted) throw left.uploadInterrupted(signal.reason);
        if (existing?.archive_sha256 === archive.sha256) return existing;
        if (existing?.archive_sha256 || (isConflict(error) && !existing)) return 'exists' as const;
        // No archive yet: nothing arrived, or another upload holds the version (or held it when its server died).
        throw left.uploadFailed(toCliError(error));
      } finally {
        bar.end();
      }
    });

    if (outcome === 'exists') return reportExisting(ctx, client, request, archive, publisherId, options.skipExisting);
    // A CI job must see that nobody can install what it published: exit 2, as for the findings of the local scan (DESIGN.md §10).
    if (outcome.status === 'NodeVersionStatusFlagged') throw flagged(request, client.baseUrl, outcome);
    report(ctx, publisherId, request, outcome, archive);
    if (outcome.status === 'NodeVersionStatusPending') ctx.out.hint('this registry reviews versions by hand: it can be installed once approved');
  }, () => rmSync(temp, { recursive: true, force: true }), (signal) => {
    if (requestSent) return;
    const nothing = `nothing of ${request.nodeId} ${request.version} was sent to the registry (the scan and the archive were local; the archive is removed)`;
    ctx.out.error(new CliError(`interrupted before the publish request: ${nothing}`, exitCodeForSignal(signal), 'interrupted', 'run the same command again to publish it'), false);
  });
}

const isConflict = (error: unknown) => (error as { status?: number })?.status === 409;

/**
 * The version as the registry has it after a failed upload; undefined when it cannot be read. With
 * `waitMs` (another upload holds the version: the retry window, as long as a restart is waited for),
 * read again until it has an archive, for that long.
 */
async function versionAfterUpload(client: Client, request: { nodeId: string; version: string }, waitMs: number, signal: AbortSignal) {
  const until = Date.now() + waitMs;
  for (let delay = 300; ; delay = Math.min(delay * 2, 2000)) {
    const read = client.call(routes.getNodeVersion, { params: { nodeId: request.nodeId, version: request.version } });
    const version = await untilInterrupted(signal, read).catch(() => undefined); // a signal stops the retries of a registry that is down
    if (!version || version.archive_sha256 || version.status !== 'NodeVersionStatusPending' || Date.now() + delay > until || signal.aborted) return version;
    await sleep(delay, undefined, { signal }).catch(() => {});
  }
}

const alreadyPublished = (request: { nodeId: string; version: string }, registry: string) =>
  new CliError(`${request.nodeId} ${request.version} is already published on ${registry}`, EXIT.conflict, 'conflict', EXISTS_HINT, 409);

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

/**
 * The version is on the registry already. --skip-existing makes that success only when it is the same
 * archive and the version can be installed: a withdrawn (Deleted) version can never be published
 * again, and another archive under the same number is usually a forgotten version bump (exit 3 both).
 */
async function reportExisting(
  ctx: Ctx, client: Client, request: { nodeId: string; version: string }, archive: ArchiveResult, publisherId: string, skipExisting?: boolean,
) {
  let existing: NodeVersion | undefined;
  try {
    existing = await client.call(routes.getNodeVersion, { params: { nodeId: request.nodeId, version: request.version } });
  } catch (error) {
    if (!skipExisting) throw alreadyPublished(request, client.baseUrl);
    throw toCliError(error);
  }
  const what = `${request.nodeId} ${request.version}`;
  if (existing.status === 'NodeVersionStatusDeleted') {
    throw new CliError(`${what} was withdrawn (deleted) on ${client.baseUrl}: a deleted version cannot be published again`, EXIT.conflict, 'conflict', BUMP_HINT, 409);
  }
  // A re-run of the same release (its first answer lost) reads "same archive"; another one is a forgotten bump or a race lost.
  const same = existing.archive_sha256 === archive.sha256;
  if (!skipExisting && same) {
    throw new CliError(`${what} is already published on ${client.baseUrl} with this same archive (sha256 ${archive.sha256})`, EXIT.conflict, 'conflict', EXISTS_HINT, 409);
  }
  if (!skipExisting && !existing.archive_sha256) throw alreadyPublished(request, client.baseUrl);
  if (existing.status === 'NodeVersionStatusFlagged' && same) throw flagged(request, client.baseUrl, existing);
  if (existing.archive_sha256 && !same) {
    throw new CliError(
      `${what} is already published on ${client.baseUrl} with another archive (published sha256 ${existing.archive_sha256}, local ${archive.sha256})`,
      EXIT.conflict,
      'conflict',
      `${BUMP_HINT}; --skip-existing skips only a version published with the same files`,
      409,
    );
  }
  report(ctx, publisherId, request, existing, archive, client.baseUrl);
}

const BUMP_HINT = 'bump the version in pyproject.toml and publish that';

/** A version the registry's scan flagged: registered, with its archive, but nobody can install it until an admin lifts the flag. */
const flagged = (request: { nodeId: string; version: string }, registry: string, version: NodeVersion) =>
  new CliError(
    `the registry flagged ${request.nodeId} ${request.version} (${registry}): ${version.status_reason ?? 'no reason given'}; nobody can install it unless an admin lifts the flag`,
    EXIT.invalid,
    'flagged',
    `see every finding with \`nodereg node versions ${request.nodeId} --reasons\`; fix them and publish a new version (bump it in pyproject.toml), or ask an admin to review this one`,
  );

/** Prints the publish object of DESIGN.md §5 for a version on the registry, and fills GITHUB_OUTPUT. */
function report(
  ctx: Ctx,
  publisherId: string,
  request: { nodeId: string; version: string },
  version: NodeVersion,
  archive: ArchiveResult,
  /** Set when --skip-existing found the version already there: the registry it is on. */
  skippedOn?: string,
): void {
  const result: PublishReport = {
    publisher_id: publisherId,
    node_id: request.nodeId,
    version: version.version ?? request.version,
    status: version.status ?? 'unknown',
    download_url: version.downloadUrl ?? null,
    archive_sha256: version.archive_sha256 ?? archive.sha256,
    archive_size: version.archive_size ?? archive.size,
    files: archive.files,
    skipped: skippedOn !== undefined,
  };
  const outputFile = ctx.env.GITHUB_OUTPUT;
  if (outputFile) {
    try {
      appendFileSync(
        outputFile,
        `version=${result.version}\ndownload_url=${result.download_url ?? ''}\narchive_sha256=${result.archive_sha256}\nskipped=${result.skipped}\n`,
      );
    } catch (error) {
      // The version is on the registry: say so, and which variable to fix.
      throw new CliError(
        `${result.node_id} ${result.version} is published (${result.download_url ?? 'no download URL'}), but GITHUB_OUTPUT (${outputFile}) cannot be written: ${(error as Error).message}`,
        EXIT.failure,
        'github_output',
        'set GITHUB_OUTPUT to a writable file or unset it, then run the same publish with --skip-existing',
      );
    }
  }
  ctx.out.result(result, () =>
    (skippedOn
      ? `skipped: ${result.node_id} ${result.version} is already published on ${skippedOn} (--skip-existing; ${statusWord(result.status)})\n`
      : `${result.node_id} ${result.version} published by ${result.publisher_id} (${statusWord(result.status)})\n`) +
    table([
      ['download', result.download_url ?? '-'],
      ['sha256', result.archive_sha256],
      ['size', `${formatSize(result.archive_size)}, ${result.files} file${result.files === 1 ? '' : 's'}`],
    ]),
  );
}

/** The command that resumes a failed upload: the same publish, which gets a fresh upload URL. */
function resumeCommand(ctx: Ctx, dir: string | undefined, options: PublishOptions): string {
  const parts = ['nodereg', 'publish'];
  if (dir) parts.push(shellWord(dir));
  // The archive may have arrived before the failure: then the version exists and that is success.
  parts.push('--skip-existing');
  const registry = ctx.globals().registry;
  if (registry) parts.push('--registry', shellWord(registry));
  if (options.publisher) parts.push('--publisher', shellWord(options.publisher));
  if (options.changelogFile && options.changelogFile !== '-') parts.push('--changelog-file', shellWord(options.changelogFile));
  if (options.changelog) parts.push('--changelog', shellWord(options.changelog));
  return parts.join(' ');
}

/** The upload's progress bar on stderr, only where animations may show (a terminal, not CI, not --json). */
function progressBar(ctx: Ctx): { update?: (sent: number, total: number) => void; end(): void } {
  if (!ctx.out.animated) return { end: () => {} };
  const line = ctx.out.progress();
  return {
    update: (sent, total) => {
      const percent = total ? Math.floor((sent / total) * 100) : 100;
      const width = 30;
      const filled = Math.round((percent / 100) * width);
      line.update(`uploading [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(percent).padStart(3)}%  ${formatSize(sent)} / ${formatSize(total)}`, sent >= total);
    },
    end: line.end,
  };
}

const ARCHIVE_HINT = `nothing was published: ${LIMITS_HINT}`;

/** Fails before anything is created when the archive breaks the registry's limits (GET /limits). */
function checkLimits(client: Client, limits: RegistryLimits | undefined, archive: ArchiveResult, request: { nodeId: string; version: string }): void {
  if (!limits) return; // a registry that does not say: the publish declares the archive, and it decides
  const problems = limitProblems(limits, { size: archive.size, unpackedSize: archive.unpackedSize, entries: archive.files });
  if (problems.length === 0) return;
  throw new CliError(`the archive of ${request.nodeId} ${request.version} does not fit ${client.baseUrl}: ${problems.join('; ')}`, EXIT.invalid, 'payload_too_large', ARCHIVE_HINT, 413);
}

/** `promise`, kept from counting as an unhandled rejection while nobody awaits it yet. */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/** Rejects with the signal's reason once it aborts, else settles as `promise` does. */
function untilInterrupted<T>(signal: AbortSignal, promise: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    promise.then(resolve, reject);
  });
}

/** What a failure after the version exists leaves behind, and the commands that finish or withdraw it. */
function leftBehind(request: { nodeId: string; version: string }, registry: string, resume: string) {
  const pending = `${request.nodeId} ${request.version} is registered on ${registry} without its archive (pending): nobody can install it yet`;
  const withdraw = `nodereg version update ${request.nodeId} ${request.version} --status deleted`;
  const finish = `finish it with \`${resume}\` (it gets a fresh upload URL and uploads again; the version number is not used up), or withdraw it with \`${withdraw}\``;
  return {
    /** `by`: the signal (SIGINT, SIGTERM), which gives the exit code. */
    interrupted(by: unknown, when: string, maybe = false): CliError {
      const what = maybe ? pending.replace(' is registered', ' may be registered') : pending;
      return new CliError(`interrupted ${when}: ${what}`, exitCodeForSignal(by), 'interrupted', finish);
    },
    unanswered(failure: CliError): CliError {
      return new CliError(`${failure.message}, with the publish request sent: ${pending.replace(' is registered', ' may be registered')}`, failure.exitCode, failure.code, finish);
    },
    uploadInterrupted(by: unknown): CliError {
      // The whole body may have been sent: the registry may have the archive, with its answer not read yet.
      const what = `${request.nodeId} ${request.version} is registered on ${registry}; if its archive did not arrive whole, it is pending: nobody can install it yet`;
      return new CliError(`interrupted during the upload: ${what}`, exitCodeForSignal(by), 'interrupted', finish);
    },
    uploadFailed(failure: CliError): CliError {
      // Retried already; one more run mends what a retry could (network, 5xx, 408, 429, an expired URL); the rest needs a fix first.
      const transient = failure.status === undefined || failure.status >= 500 || failure.status === 408 || failure.status === 429 || failure.code === 'forbidden';
      const hint =
        failure.code === 'banned'
          ? `${failure.hint ?? 'a banned publisher or node takes no archive'}; the version stays pending`
          : failure.status === 409 // another upload holds the version: the registry says how long
            ? `${failure.hint ?? 'retry once the other upload has ended'}; then ${finish}`
            : transient
              ? finish
              : `fix what the message says, then ${finish}`;
      return new CliError(`uploading the archive of ${request.nodeId} ${request.version} failed: ${failure.message}. ${pending}`, failure.exitCode, failure.code, hint, failure.status);
    },
  };
}
