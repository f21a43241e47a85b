// A registry's archive limits (GET /limits), checked before anything is published: `publish` before
// it registers the version, `validate` when the registry answers.
import { ApiError, ForeignAnswerError, type Client } from '../client/index.js';
import type { RegistryLimits } from '../contract/resources.js';
import { UNPACKED_RATIO, unpackedBound } from '../contract/limits.js';
import { archiveOverLimit, formatSize } from '../contract/size.js';
import type { SelectedFile } from '../package/files.js';
import { routes } from '../client/routes.js';

/** The registry's limits; undefined from a registry that does not publish them (an older one, another server). */
export async function fetchLimits(client: Client): Promise<RegistryLimits | undefined> {
  try {
    return await client.call(routes.getLimits);
  } catch (error) {
    // A Comfy registry has no such route: its 404 is not a registry's error answer; the next request tells a wrong URL.
    if (
      (error instanceof ApiError && error.status === 404) ||
      (error instanceof ForeignAnswerError && error.answered === 404)
    )
      return undefined;
    throw error;
  }
}

export interface ArchiveFacts {
  /** The archive's size, when it is known (packed). */
  size?: number;
  unpackedSize: number;
  entries: number;
}

/** Every limit the archive breaks, in plain words; empty when it fits. */
export function limitProblems(limits: RegistryLimits, archive: ArchiveFacts): string[] {
  const problems: string[] = [];
  if (archive.size !== undefined && archive.size > limits.max_archive)
    problems.push(archiveOverLimit(archive.size, limits.max_archive));
  if (archive.unpackedSize > limits.max_unpacked) {
    problems.push(
      `its files come to ${formatSize(archive.unpackedSize)} (${archive.unpackedSize} bytes) unpacked, over this registry's limit of ${formatSize(limits.max_unpacked)} (serve --max-unpacked)`,
    );
  } else if (archive.size !== undefined && archive.unpackedSize > unpackedBound(archive.size, limits.max_unpacked)) {
    problems.push(
      `its files come to ${archive.unpackedSize} bytes unpacked, more than ${UNPACKED_RATIO.total} times the archive's ${archive.size} bytes (registries refuse such zip bombs)`,
    );
  }
  if (archive.entries > limits.max_entries)
    problems.push(`it holds ${archive.entries} files, more than this registry's limit of ${limits.max_entries}`);
  return problems;
}

/**
 * The most bytes a zip of these files can take: every file stored or deflated (deflate grows
 * incompressible data by a few bytes per 16 KiB block), with its local and central headers, data
 * descriptor and name twice, plus the end records. Below a limit, the archive fits without packing it.
 */
export function archiveSizeBound(files: readonly Pick<SelectedFile, 'path' | 'size'>[]): number {
  let bound = 22 + 98; // end of central directory, and its zip64 form
  for (const file of files)
    bound += file.size + 5 * Math.ceil(file.size / 16_384) + 5 + 2 * Buffer.byteLength(file.path) + 150;
  return bound;
}

export const LIMITS_HINT =
  "leave files out with [tool.nodereg] excludes or a .noderegignore file (`nodereg pack --list` shows what is packed), or ask the registry's operator to raise its limits";
