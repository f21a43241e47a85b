import type { ScanSeverity } from '../../contract/scan.js';
import { blocking, failOnOption, findingsError, findingsText, scanProject } from '../findings.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { formatSize } from '../../contract/size.js';
import type { Project } from '../../package/project.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { table } from '../output.js';
import { buildArchive, loadChecked, readChangelog, withCleanup, type ChangelogFlags } from '../project.js';
import { archiveSizeBound, fetchLimits, LIMITS_HINT, limitProblems } from '../registry-limits.js';
import { examples } from './index.js';

interface Options extends ChangelogFlags {
  publisher?: string;
  failOn: ScanSeverity;
  offline?: boolean;
}

export function register(program: Command, ctx: Ctx): void {
  const command = program
    .command('validate [dir]')
    .description("check pyproject.toml and the file set as the registry would, every problem at once (exit 2); when the registry answers, also against its archive limits")
    .option('--publisher <id>', 'publisher id (overrides [tool.nodereg] publisher)')
    .option('--changelog <text>', 'changelog of the version, checked like publish does')
    .option('--changelog-file <file>', 'read the changelog from a file (- for stdin)')
    .addOption(failOnOption(program))
    .option('--offline', "do not ask the registry for its limits")
    .action(async (dir: string | undefined, options: Options) => {
      const changelog = await readChangelog(ctx, options);
      const project = await loadChecked(ctx, dir, { requirePublisher: true, publisher: options.publisher, changelog });
      const { request, files } = project;
      const unpacked = files.reduce((sum, f) => sum + f.size, 0);
      // The scan, as `nodereg scan` runs it: findings at --fail-on fail like any other problem.
      const scan = await scanProject(project);
      const stopping = blocking(scan, options.failOn);
      if (stopping.length) throw findingsError(stopping, options.failOn, false);
      const shown = scan.findings.some((f) => !f.suppressed) ? `\n\n${findingsText(ctx.out, scan, files)}` : '';
      // Which key set each field, so that a manifest read from [tool.comfy] or classifiers says so.
      const keys = Object.fromEntries(project.manifest.keys);
      // A field sent on the node and on the version is shown once.
      const sources = new Map<string, string>();
      for (const [path, key] of project.manifest.keys) sources.set(`${path.replace(/^node(_version)?\./, '')}\0${key}`, key);
      const checkedAgainst = options.offline ? null : await checkRegistryLimits(ctx, project, unpacked);
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
        },
        () =>
          `${request.nodeId} ${request.version} (publisher ${request.publisherId}) is ready to publish${checkedAgainst ? ` to ${checkedAgainst}` : ''}: ${files.length} file${files.length === 1 ? '' : 's'}, ${formatSize(unpacked)}\n` +
          `read from:\n${table([...sources].map(([id, key]) => [`  ${id.split('\0')[0]}`, key]))}${shown}`,
      );
    });
  examples(command, ['nodereg validate', 'nodereg validate ./my-node --json', 'nodereg validate --publisher my-team --offline', 'nodereg validate --fail-on medium']);
}

/**
 * Checks the archive against the registry's limits when the registry answers; resolves to its URL,
 * or null when it could not say (unreachable, or a registry without GET /limits). The archive is
 * packed (to a temporary file) only when its size could be over the limit.
 */
async function checkRegistryLimits(ctx: Ctx, project: Project, unpacked: number): Promise<string | null> {
  const client = await ctx.client({ retries: 0, restartWindowMs: 0, timeoutMs: 5_000 });
  let limits;
  try {
    limits = await fetchLimits(client);
  } catch (error) {
    ctx.out.info(`note: ${client.baseUrl} did not answer (${(error as Error).message}): its archive limits were not checked (--offline skips asking)`);
    return null;
  }
  if (!limits) return null;
  let size: number | undefined;
  if (archiveSizeBound(project.files) > limits.max_archive) {
    const temp = mkdtempSync(join(tmpdir(), 'nodereg-validate-'));
    size = await withCleanup(async () => (await buildArchive(ctx, project, join(temp, 'node.zip'), Infinity)).size, () => rmSync(temp, { recursive: true, force: true }));
  }
  const problems = limitProblems(limits, { size, unpackedSize: unpacked, entries: project.files.length });
  if (problems.length) {
    throw new CliError(`${project.request!.nodeId} ${project.request!.version} does not fit ${client.baseUrl}: ${problems.join('; ')}`, EXIT.invalid, 'payload_too_large', LIMITS_HINT);
  }
  return client.baseUrl;
}
