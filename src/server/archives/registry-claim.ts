// The claim object (DESIGN.md §16): at start a registry writes its id into its archive storage once,
// and refuses to serve a storage that names another registry, so two registries never mix archives.
import { StartRefusedError } from '../start-refusal.js';
import type { ArchiveStorage } from './storage.js';

/** The claim's key; no publisher id starts with a dot, so no archive key can be it. */
export const CLAIM_KEY = '.nodereg-registry.json';
/** A claim is a line of JSON; anything longer is not one of ours. */
const CLAIM_MAX = 4096;

/** The id the storage's claim names; undefined when there is no claim, '' when the object is not a claim. */
export async function readClaim(archives: Pick<ArchiveStorage, 'open'>): Promise<string | undefined> {
  const opened = await archives.open(CLAIM_KEY);
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of opened.stream as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > CLAIM_MAX) {
      opened.stream.destroy();
      return '';
    }
  }
  try {
    const claim = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { registry?: unknown };
    return typeof claim.registry === 'string' ? claim.registry : '';
  } catch {
    return '';
  }
}

/**
 * Writes the claim of registry `id` unless the storage has one, then reads it back: another id there
 * (or an object that is no claim) refuses the start. Every instance of one registry shares its id
 * (the database keeps it), so they all pass.
 */
export async function claimStorage(archives: ArchiveStorage, id: string): Promise<void> {
  const claim = `${JSON.stringify({ registry: id, claimed_at: new Date().toISOString() })}\n`;
  await archives.writeOnce(CLAIM_KEY, Buffer.from(claim), 'application/json');
  const found = await readClaim(archives);
  if (found === id) return;
  const where = archives.where(CLAIM_KEY);
  const named = found ? `registry ${found}` : 'no registry (the object there is not a nodereg claim)';
  throw new StartRefusedError(
    `the archive storage belongs to another registry: its claim ${where} names ${named}, and this registry (its database) is ${id}; two registries on one storage would overwrite each other's archives`,
    'storage_claimed',
    `give this registry a storage of its own (--storage or NODEREG_STORAGE_URL: another bucket, prefix or directory); or, if registry ${found || '(unknown)'} is gone and this registry is to take its archives over, delete ${where} and start again`,
    'conflict',
  );
}
