import type { ScanSeverity } from '../../contract/scan.js';
import { blocking, failOnOption, findingProblems, findingsError, findingsText, scanProject } from '../findings.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_MAX_ARCHIVE } from '../../shared/tuning.js';
import type { RegistryLimits } from '../../contract/resources.js';
import { formatSize } from '../../contract/size.js';
import type { Project } from '../../package/project.js';
import type { Ctx } from '../context.js';
import { onNodes } from '../many-nodes.js';
import { allOption, type ManyFlags } from '../project-discovery.js';
import { ApiError, ForeignAnswerError } from '../../client/errors.js';
import { routes } from '../../client/routes.js';
import { CliError, EXIT, toCliError } from '../errors.js';
import { table } from '../output.js';
import {
  buildArchive,
  loadChecked,
  parseMaxSize,
  readChangelog,
  warnAboutLfsPointers,
  withCleanup,
  type ChangelogFlags,
} from '../project.js';
import { archiveSizeBound, fetchLimits, LIMITS_HINT, limitProblems } from '../registry-limits.js';
import { examples } from '../examples.js';
import { classesText, managerVersionWarning, projectClasses } from '../node-classes.js';

interface Options extends ChangelogFlags {
  publisher?: string;
  failOn: ScanSeverity;
  offline?: boolean;
  maxSize?: string;
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('validate [dirs...]')
    .description(
      "check pyproject.toml and the file set as the registry would, every problem at once (exit 2), and the archive's size as pack checks it; when the registry answers, also against its archive limits",
    )
    .option('--publisher <id>', 'publisher id (overrides [tool.nodereg] publisher and [tool.comfy] PublisherId)')
    .option('--changelog <text>', 'changelog of the version, checked like publish does')
    .option('--changelog-file <file>', 'read the changelog from a file (- for stdin)')
    .addOption(failOnOption(program))
    .option('--offline', 'do not ask the registry for its limits')
    .option(
      '--max-size <size>',
      `fail when the archive would be larger, as pack and publish do (default ${formatSize(DEFAULT_MAX_ARCHIVE)})`,
    )
    .addOption(allOption())
    .action((dirs: string[], options: Options & ManyFlags) =>
      onNodes(ctx, dirs, options.all, (node, dir) => validateOne(node, dir, options)),
    );
  examples(command, [
    'nodereg validate',
    'nodereg validate ./my-node --json',
    'nodereg validate --publisher my-team --offline',
    'nodereg validate --fail-on medium',
    'nodereg validate --offline --max-size 500MiB',
  ]);
}

/**
 * The publisher, on a registry that answered: publish would stop at one that does not exist, so
 * validate does not call the node ready (exit 5).
 */
async function requirePublisher(ctx: Ctx, publisherId: string, url: string): Promise<void> {
  const client = await ctx.client({ retries: 0, restartWindowMs: 0, timeoutMs: 5_000 });
  const found = await client
    .call(routes.getPublisher, { params: { publisherId } })
    .then(() => true)
    .catch((error: unknown) => (error instanceof ApiError && error.status === 404 ? false : true));
  if (found) return;
  throw new CliError(
    `publisher ${publisherId} does not exist on ${url}: the node is not ready to publish`,
    EXIT.notFound,
    'not_found',
    `create it with \`nodereg publisher create ${publisherId}\`, or publish with \`nodereg publish --create-publisher\``,
  );
}

/**
 * The registry's limits with its URL when it answers; null when it could not say (unreachable, a
 * registry without GET /limits, or a URL that is not a registry's, which is warned of: the other
 * commands fail there with exit 2, and validate's own checks need no registry).
 */
async function registryLimits(ctx: Ctx, project: Project): Promise<{ url: string; limits: RegistryLimits } | null> {
  const client = await ctx.client({ retries: 0, restartWindowMs: 0, timeoutMs: 5_000 });
  try {
    const limits = await fetchLimits(client);
    if (limits) return { url: client.baseUrl, limits };
    // No limits: a Comfy registry lacks the route, but a 404 page says the same; a read of the node tells them apart.
    await client.call(routes.getNode, { params: { nodeId: project.request!.nodeId } }).catch((error: unknown) => {
      if (error instanceof ForeignAnswerError) throw error;
    });
    return null;
  } catch (error) {
    if (error instanceof ForeignAnswerError) {
      const refused = toCliError(error);
      const warning = `${refused.message}; the archive was not checked against its limits`;
      project.warnings.push(warning);
      ctx.out.warn(warning);
      ctx.out.hint(`${refused.hint}; --offline does not ask the registry`);
      return null;
    }
    ctx.out.info(
      `note: ${client.baseUrl} did not answer (${(error as Error).message}): its archive limits were not checked (--offline skips asking)`,
    );
    return null;
  }
}

/**
 * Checks the archive against `maxSize`, as pack and publish do (over it, pack's error naming the
 * largest files), and against the registry's limits when it answered. The archive is packed (to a
 * temporary file) only when its size could be over one of them.
 */
async function checkArchive(
  ctx: Ctx,
  project: Project,
  unpacked: number,
  maxSize: number,
  registry: { url: string; limits: RegistryLimits } | null,
): Promise<void> {
  let size: number | undefined;
  if (archiveSizeBound(project.files) > Math.min(maxSize, registry?.limits.max_archive ?? Infinity)) {
    const temp = mkdtempSync(join(tmpdir(), 'nodereg-validate-'));
    size = await withCleanup(
      async () => (await buildArchive(ctx, project, join(temp, 'node.zip'), maxSize)).size,
      () => rmSync(temp, { recursive: true, force: true }),
    );
  } else {
    // packed, the packer would have told them from the bytes it reads
    const { findLfsPointers } = await import('../../package/lfs.js');
    await warnAboutLfsPointers(ctx, project, findLfsPointers(project.files));
  }
  if (!registry) return;
  const problems = limitProblems(registry.limits, { size, unpackedSize: unpacked, entries: project.files.length });
  if (problems.length) {
    throw new CliError(
      `${project.request!.nodeId} ${project.request!.version} does not fit ${registry.url}: ${problems.join('; ')}`,
      EXIT.invalid,
      'payload_too_large',
      LIMITS_HINT,
    );
  }
}

/** `nodereg validate [dir]`, of one node. */
async function validateOne(ctx: Ctx, dir: string | undefined, options: Options): Promise<void> {
  const maxSize = parseMaxSize(options.maxSize, DEFAULT_MAX_ARCHIVE);
  const changelog = await readChangelog(ctx, options);
  const project = await loadChecked(
    ctx,
    dir,
    { requirePublisher: true, publisher: options.publisher, changelog },
    async (found) => findingProblems(blocking(await scanProject(found, true), options.failOn)),
  );
  const { request, files } = project;
  const unpacked = files.reduce((sum, f) => sum + f.size, 0);
  // The scan, as `nodereg scan` runs it: findings at --fail-on fail like any other problem.
  const scan = await scanProject(project, true);
  const stopping = blocking(scan, options.failOn);
  if (stopping.length) throw findingsError(stopping, options.failOn, false);
  const shown =
    scan.findings.some((f) => !f.suppressed) || scan.skipped ? `\n\n${findingsText(ctx.out, scan, files)}` : '';
  // Which key set each field, so that a manifest read from [tool.comfy] or classifiers says so.
  const keys = Object.fromEntries(project.manifest.keys);
  // A field sent on the node and on the version is shown once.
  const sources = new Map<string, string>();
  for (const [path, key] of project.manifest.keys)
    sources.set(`${path.replace(/^node(_version)?\./, '')}\0${key}`, key);
  const versionWarning = managerVersionWarning(request.version);
  if (versionWarning) {
    project.warnings.push(versionWarning);
    ctx.out.warn(versionWarning);
  }
  const classes = await projectClasses(project);
  const registry = options.offline ? null : await registryLimits(ctx, project);
  if (registry && request.publisherId) await requirePublisher(ctx, request.publisherId, registry.url);
  await checkArchive(ctx, project, unpacked, maxSize, registry);
  const checkedAgainst = registry?.url ?? null;
  ctx.out.result(
    {
      valid: true,
      publisher_id: request.publisherId,
      node_id: request.nodeId,
      version: request.version,
      files: files.length,
      unpacked_size: unpacked,
      keys,
      warnings: project.warnings,
      limits_checked: checkedAgainst,
      scan,
      node_classes: classes,
    },
    () =>
      `${request.nodeId} ${request.version} (publisher ${request.publisherId}) is ready to publish${checkedAgainst ? ` to ${checkedAgainst}` : ''}: ${files.length} file${files.length === 1 ? '' : 's'}, ${formatSize(unpacked)}\n` +
      `read from:\n${table([...sources].map(([id, key]) => [`  ${id.split('\0')[0]}`, key]))}\n${classesText(classes)}${shown}`,
  );
}
