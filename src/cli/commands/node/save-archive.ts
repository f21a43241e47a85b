// `nodereg node download`'s file: the archive streamed to a .part file, hashed on the way, checked
// against the SHA-256 the registry recorded (the version's and the download's header), then as a zip.
import { dirname } from 'node:path';
import { announcedSha256 } from '../../../client/index.js';
import { MAX_ARCHIVE_ENTRIES } from '../../../contract/limits.js';
import type { NodeVersion } from '../../../contract/resources.js';
import { CONTENT_SHA256_HEADER } from '../../../contract/upload.js';
import { formatSize } from '../../../contract/size.js';
import { DEFAULT_MAX_UNPACKED } from '../../../shared/tuning.js';
import type { Ctx } from '../../context.js';
import { CliError, EXIT, fileProblem, invalidInput, toCliError } from '../../errors.js';
import { makeUserDir } from '../../make-dir.js';

/** Streams the archive to `file` (through a .part file), hashing it, then checks the zip and the hash. */
export async function saveArchive(client: Awaited<ReturnType<Ctx['client']>>, version: NodeVersion, file: string) {
  const { createHash } = await import('node:crypto');
  const { createWriteStream } = await import('node:fs');
  const { rename, rm } = await import('node:fs/promises');
  const { pipeline } = await import('node:stream/promises');
  makeUserDir(dirname(file), '--out');
  const response = await client.download(version.downloadUrl!).catch((error) => {
    throw toCliError(error);
  });
  const part = `${file}.part`;
  const hash = createHash('sha256');
  let size = 0;
  try {
    await pipeline(
      response.body,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          hash.update(chunk);
          size += chunk.length;
          if (version.archive_size !== undefined && size > version.archive_size) {
            throw new CliError(
              `the download is larger than the ${version.archive_size} bytes the registry announced`,
              EXIT.failure,
              'checksum_mismatch',
              'try again; if it persists, the archive on the registry is damaged',
            );
          }
          yield chunk;
        }
      },
      createWriteStream(part),
    );
    const sha256 = hash.digest('hex');
    // The version's record, and the download's own header (the registry's record as it served these bytes).
    const announced = [
      [version.archive_sha256, 'the version'],
      [announcedSha256(response), `the download's ${CONTENT_SHA256_HEADER} header`],
    ] as const;
    for (const [expected, source] of announced) {
      if (expected !== undefined && expected !== null && expected.toLowerCase() !== sha256) {
        throw new CliError(
          `the downloaded archive's SHA-256 is ${sha256}, ${source} announced ${expected || '(no SHA-256)'}; nothing was saved`,
          EXIT.failure,
          'checksum_mismatch',
          'try again; if it persists, the archive on the registry is damaged',
        );
      }
    }
    const entries = await readableZip(part);
    await rename(part, file);
    return { file, size, sha256, entries };
  } catch (error) {
    await rm(part, { force: true }).catch(() => {}); // nothing to remove where nothing could be written
    if (error instanceof CliError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'ENOTDIR')
      throw invalidInput(`cannot write ${file}: ${fileProblem(error)}`, 'pass --out <file> in a writable directory');
    throw toCliError(error);
  }
}

/**
 * Opens the zip and inflates every entry; resolves to the number of entries. A zip bomb costs no more
 * than a registry accepts: the sizes the entries declare may add up to DEFAULT_MAX_UNPACKED (the
 * registry's own limit) at most, checked before each entry is inflated, and yauzl stops an entry that
 * inflates past its declared size.
 */
async function readableZip(path: string): Promise<number> {
  const { default: yauzl } = await import('yauzl');
  return new Promise((resolve, reject) => {
    const fail = (error: Error) =>
      reject(new CliError(`the downloaded file is not a readable zip: ${error.message}`, EXIT.failure, 'bad_archive'));
    yauzl.open(path, { lazyEntries: true, validateEntrySizes: true }, (openError, zip) => {
      if (openError || !zip) return fail(openError ?? new Error('cannot open'));
      if (zip.entryCount > MAX_ARCHIVE_ENTRIES)
        return fail(
          new Error(`it has ${zip.entryCount} entries, more than the ${MAX_ARCHIVE_ENTRIES} a registry takes`),
        );
      let count = 0;
      let declared = 0;
      zip.on('error', fail);
      zip.on('end', () => resolve(count));
      zip.on('entry', (entry: import('yauzl').Entry) => {
        count++;
        declared += entry.uncompressedSize;
        if (declared > DEFAULT_MAX_UNPACKED) {
          zip.close();
          return fail(
            new Error(
              `it expands to more than ${formatSize(DEFAULT_MAX_UNPACKED)} (at entry "${entry.fileName}"), more than a registry takes: refused without inflating it`,
            ),
          );
        }
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return fail(streamError ?? new Error('cannot read an entry'));
          stream.on('error', fail);
          stream.on('end', () => zip.readEntry());
          stream.resume();
        });
      });
      zip.readEntry();
    });
  });
}
