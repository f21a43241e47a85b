// What publish prints for a version on the registry: the DESIGN.md §5 object (and GITHUB_OUTPUT), or
// why a version already there is not success.
import { appendFileSync } from 'node:fs';
import type { Client } from '../../client/index.js';
import { routes } from '../../client/routes.js';
import type { NodeVersion } from '../../contract/resources.js';
import { formatSize } from '../../contract/size.js';
import type { ArchiveResult } from '../../package/zip.js';
import type { Ctx } from '../context.js';
import { CliError, EXIT, toCliError } from '../errors.js';
import { table } from '../output.js';
import { statusWord } from '../project.js';

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

const EXISTS_HINT =
  'bump the version in pyproject.toml, or pass --skip-existing to treat the same version with the same archive as success';

const alreadyPublished = (request: { nodeId: string; version: string }, registry: string) =>
  new CliError(
    `${request.nodeId} ${request.version} is already published on ${registry}`,
    EXIT.conflict,
    'conflict',
    EXISTS_HINT,
    409,
  );

/**
 * The version is on the registry already. --skip-existing makes that success only when it is the same
 * archive and the version can be installed: a withdrawn (Deleted) version can never be published
 * again, and another archive under the same number is usually a forgotten version bump (exit 3 both).
 */
export async function reportExisting(
  ctx: Ctx,
  client: Client,
  request: { nodeId: string; version: string },
  archive: ArchiveResult,
  publisherId: string,
  skipExisting?: boolean,
) {
  let existing: NodeVersion | undefined;
  try {
    existing = await client.call(routes.getNodeVersion, {
      params: { nodeId: request.nodeId, version: request.version },
    });
  } catch (error) {
    if (!skipExisting) throw alreadyPublished(request, client.baseUrl);
    throw toCliError(error);
  }
  const what = `${request.nodeId} ${request.version}`;
  if (existing.status === 'NodeVersionStatusDeleted') {
    throw new CliError(
      `${what} was withdrawn (deleted) on ${client.baseUrl}: a deleted version cannot be published again`,
      EXIT.conflict,
      'conflict',
      BUMP_HINT,
      409,
    );
  }
  // A re-run of the same release (its first answer lost) reads "same archive"; another one is a forgotten bump or a race lost.
  const same = existing.archive_sha256 === archive.sha256;
  if (!skipExisting && same) {
    throw new CliError(
      `${what} is already published on ${client.baseUrl} with this same archive (sha256 ${archive.sha256})`,
      EXIT.conflict,
      'conflict',
      EXISTS_HINT,
      409,
    );
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
export const flagged = (request: { nodeId: string; version: string }, registry: string, version: NodeVersion) =>
  new CliError(
    `the registry flagged ${request.nodeId} ${request.version} (${registry}): ${version.status_reason ?? 'no reason given'}; nobody can install it unless an admin lifts the flag`,
    EXIT.invalid,
    'flagged',
    `see every finding with \`nodereg node versions ${request.nodeId} --reasons\`; fix them and publish a new version (bump it in pyproject.toml), or ask an admin to review this one`,
  );

/** Prints the publish object of DESIGN.md §5 for a version on the registry, and fills GITHUB_OUTPUT. */
export function report(
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
  ctx.out.result(
    result,
    () =>
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
