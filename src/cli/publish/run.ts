// `nodereg publish [dir]`: scan and pack locally, then publish the version and upload its archive.
// commands/publish.ts declares the options; this runs with them and the context's client and output.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routes } from '../../client/routes.js';
import { formatSize } from '../../contract/size.js';
import type { PublishRequest } from '../../package/manifest.js';
import type { Project } from '../../package/project.js';
import type { ArchiveResult } from '../../package/zip.js';
import { DEFAULT_MAX_ARCHIVE } from '../../shared/tuning.js';
import type { Ctx } from '../context.js';
import { CliError, exitCodeForSignal, toCliError } from '../errors.js';
import { blocking, findingsError, scanProject, unscannedText } from '../findings.js';
import {
  buildArchive,
  fileTable,
  listFiles,
  loadChecked,
  parseMaxSize,
  readChangelog,
  warnUncommitted,
  withCleanup,
} from '../project.js';
import { fetchLimits } from '../registry-limits.js';
import { checkLimits, leftBehind, resumeCommand, awaitedLater } from './left-behind.js';
import { refuseDirtyTree } from './dirty-tree.js';
import type { PublishOptions } from './options.js';
import { flagged, report, reportExisting } from './report.js';
import { type Sending, sendPublish, uploadArchive } from './send.js';
import { publishClient } from './trusted.js';

export type { PublishOptions } from './options.js';

/**
 * `nodereg publish [dir]`. `ready`, when given, is awaited once the node is scanned and packed and
 * before anything is sent: publish of many nodes (many.ts) sends none before each is ready. A signal
 * meanwhile aborts the wait (so that the node being sent says what it leaves, rather than this one ending the process).
 */
export async function publishProject(
  ctx: Ctx,
  dir: string | undefined,
  options: PublishOptions,
  ready?: (signal: AbortSignal) => Promise<void>,
): Promise<void> {
  const maxSize = parseMaxSize(options.maxSize, DEFAULT_MAX_ARCHIVE);
  const retryWindowMs = ctx.retryWindow().ms; // a bad --retry-window stops the run before the pack, as a bad --max-size does
  const changelog = options.changelogFromGit
    ? (await import('./changelog-from-git.js')).changelogFromGit(ctx, dir, options)
    : await readChangelog(ctx, options);
  const project = await loadChecked(ctx, dir, { requirePublisher: true, publisher: options.publisher, changelog });
  refuseDirtyTree(ctx, project, dir, options);
  const { request } = project;
  const publisherId = request.publisherId!;
  // The registry's limits are asked for while the project is scanned and packed: a read that says
  // nothing of the node. Its answer, or its error (no token, a dead registry), counts only after
  // the scan has passed, in the order the steps have always failed in.
  const registry = options.dryRun
    ? undefined
    : awaitedLater(
        publishClient(ctx, options.trusted, { publisherId, nodeId: request.nodeId }).then(async (client) => ({
          client,
          limits: await fetchLimits(client),
        })),
      );
  const temp = mkdtempSync(join(tmpdir(), 'nodereg-publish-'));
  const path = join(temp, 'node.zip');
  let requestSent = false;
  await withCleanup(
    async (interrupts) => {
      const archive = await scanAndPack(ctx, project, path, maxSize, options);
      // The archive is declared, so a registry refuses one over its limits before the version exists.
      const body = {
        ...request.body,
        node_version: { ...request.body.node_version, archive_size: archive.size, archive_sha256: archive.sha256 },
      };
      if (options.dryRun) return printDryRun(ctx, project, request, body, archive);
      if (ready) await interrupts.caught(ready);
      const { client, limits } = await registry!.catch((error: unknown) => {
        throw toCliError(error);
      });
      checkLimits(client, limits, archive, request);
      const left = leftBehind(request, client.baseUrl, resumeCommand(ctx, dir, options));
      const outcome = await interrupts.caught(async (signal) => {
        requestSent = true; // from here a signal aborts this step, which says what it leaves
        const s: Sending = { ctx, client, request, publisherId, options, signal, left };
        const published = await sendPublish(s, body);
        if (published === 'exists') return published;
        return uploadArchive(s, published.signedUrl, { path, archive, retryWindowMs });
      });
      if (outcome === 'exists') return reportExisting(ctx, client, request, archive, publisherId, options.skipExisting);
      // A CI job must see that nobody can install what it published: exit 2, as for the findings of the local scan (DESIGN.md §10).
      if (outcome.status === 'NodeVersionStatusFlagged') throw flagged(request, client.baseUrl, outcome);
      report(ctx, publisherId, request, outcome, archive);
      if (outcome.status === 'NodeVersionStatusPending')
        ctx.out.hint('this registry reviews versions by hand: it can be installed once approved');
    },
    () => rmSync(temp, { recursive: true, force: true }),
    (signal) => {
      if (!requestSent) interruptedBeforeRequest(ctx, request, signal);
    },
  );
}

/**
 * Scans and packs the project: both local, so the packer's reads, large files and worker threads
 * proceed while the scan parses on this thread. The scan still decides first, and nothing of the
 * node reaches the registry before it passes.
 */
async function scanAndPack(
  ctx: Ctx,
  project: Project,
  path: string,
  maxSize: number,
  options: PublishOptions,
): Promise<ArchiveResult> {
  const [scanned, packed] = await Promise.allSettled([
    scanProject(project, true),
    buildArchive(ctx, project, path, maxSize),
  ]);
  if (scanned.status === 'rejected') throw scanned.reason;
  const scan = scanned.value;
  const stopping = blocking(scan, options.failOn);
  if (stopping.length && !options.acceptFindings) throw findingsError(stopping, options.failOn, true);
  for (const f of scan.findings.filter((x) => !x.suppressed))
    ctx.out.warn(`scan: ${f.file}:${f.line} ${f.severity} ${f.rule}: ${f.message}`);
  for (const s of scan.skipped ?? []) ctx.out.warn(`scan: ${s.file} ${s.severity} ${unscannedText(s)}`);
  if (!options.dryRun) warnUncommitted(ctx, project);
  if (packed.status === 'rejected') throw packed.reason;
  return packed.value;
}

/** --dry-run: the request that would be sent, and the archive's files; nothing is sent. */
async function printDryRun(
  ctx: Ctx,
  project: Project,
  request: PublishRequest,
  body: PublishRequest['body'],
  archive: ArchiveResult,
): Promise<void> {
  const { registry } = await ctx.connection();
  const { buildPath } = await import('../../contract/operation.js');
  const path = buildPath(routes.publishVersion.path, { publisherId: request.publisherId!, nodeId: request.nodeId });
  const fileList = listFiles(project);
  ctx.out.result(
    {
      dry_run: true,
      registry,
      publisher_id: request.publisherId,
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
}

function interruptedBeforeRequest(ctx: Ctx, request: PublishRequest, signal: NodeJS.Signals): void {
  const nothing = `nothing of ${request.nodeId} ${request.version} was sent to the registry (the scan and the archive were local; the archive is removed)`;
  ctx.out.error(
    new CliError(
      `interrupted before the publish request: ${nothing}`,
      exitCodeForSignal(signal),
      'interrupted',
      'run the same command again to publish it',
    ),
    false,
  );
}
