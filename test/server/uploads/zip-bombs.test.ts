// Zip bombs within the size limits: an archive far under --max-unpacked may still expand a thousand
// times (deflate's most), and inflating costs CPU in proportion to what comes out. The check bounds the
// expansion per entry and in total (UNPACKED_RATIO) from the declared sizes, before inflating, and
// refuses naming the entry. Also: an entry whose compression method differs between its two headers.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { limitProblems } from '../../../src/cli/registry-limits.js';
import { UNPACKED_RATIO } from '../../../src/contract/limits.js';
import { DEFAULT_MAX_UNPACKED } from '../../../src/shared/tuning.js';
import { MemoryBudget, validateZip } from '../../../src/server/archives/validate-zip.js';
import { HttpError } from '../../../src/server/errors.js';
import { tempDir } from '../../helpers.js';
import { rawZip, type RawEntry } from '../zip-builder.js';

const MiB = 1024 * 1024;
const zeros = (bytes: number) => Buffer.alloc(bytes);
/** Deflate that expands to `mib` MiB of zeros, ~1 KB a MiB: one flushed block repeated, then an empty final one. */
const BLOCK = deflateRawSync(zeros(MiB), { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
const FINAL = Buffer.from([1, 0, 0, 0xff, 0xff]);
function zeroBomb(mib: number): Buffer {
  return Buffer.concat([...Array<Buffer>(mib).fill(BLOCK), FINAL]);
}
const ZERO_MIB = Buffer.concat([BLOCK, FINAL]);
const ZERO_MIB_CRC = crc32(zeros(MiB));
/** An entry of 1 MiB of zeros, packed to ~1 KB. */
const zeroMiB = (name: string): RawEntry => ({ name, compressed: ZERO_MIB, uncompressedSize: MiB, crc: ZERO_MIB_CRC });

function writeZip(entries: RawEntry[]): { path: string; bytes: number } {
  const data = rawZip(entries);
  const path = join(tempDir(), 'node.zip');
  writeFileSync(path, data);
  return { path, bytes: data.length };
}

/** The error validateZip refuses `path` with, and the CPU time (ms) the check took. */
async function refusal(path: string, room: number): Promise<{ error: HttpError; cpuMs: number }> {
  const before = process.cpuUsage();
  const error = await validateZip(path, { maxUnpacked: DEFAULT_MAX_UNPACKED, memory: new MemoryBudget(room) }).then(
    () => undefined,
    (e: unknown) => e,
  );
  const used = process.cpuUsage(before);
  expect(error).toBeInstanceOf(HttpError);
  expect((error as HttpError).status).toBe(400);
  return { error: error as HttpError, cpuMs: (used.user + used.system) / 1000 };
}

describe.each([
  { how: 'read whole', room: 64 * MiB },
  { how: 'read from the file', room: 0 },
])('zip bombs within the size limits, $how', ({ room }) => {
  it('refuses an entry that expands more than the per-entry ratio, naming it, before inflating it', async () => {
    // ~1 MB of deflate that expands to ~1 GiB, under the default --max-unpacked: seconds of CPU if inflated
    const packed = zeroBomb(DEFAULT_MAX_UNPACKED / MiB - 1);
    const { path } = writeZip([
      { name: 'a.py', data: Buffer.from('x = 1\n') },
      { name: 'weights.bin', compressed: packed, uncompressedSize: DEFAULT_MAX_UNPACKED - MiB, crc: 0 },
    ]);
    const { error, cpuMs } = await refusal(path, room);
    expect(error.message).toMatch(
      new RegExp(
        `entry "weights\\.bin" expands to \\d+ bytes from ${packed.length}, more than ${UNPACKED_RATIO.entry} times its packed size`,
      ),
    );
    expect(cpuMs).toBeLessThan(1000); // inflating it whole takes several seconds
  });

  it('refuses an archive whose entries together expand more than the total ratio, naming the entry that passes it', async () => {
    // entries of 1 MiB of zeros (~1 KB each, under the per-entry floor): 40 MiB from ~45 KB
    const { path, bytes } = writeZip(Array.from({ length: 40 }, (_, i) => zeroMiB(`data/${i}.bin`)));
    expect(bytes * UNPACKED_RATIO.total).toBeLessThan(UNPACKED_RATIO.totalFloor);
    const { error } = await refusal(path, room);
    // the floor (16 MiB) holds: the 17th entry passes it
    expect(error.message).toBe(
      `invalid archive: it expands to more than ${UNPACKED_RATIO.totalFloor} bytes, ${UNPACKED_RATIO.total} times its ${bytes} bytes (at entry "data/16.bin")`,
    );
  });

  it('accepts a 1 MB upload that expands to its total bound, inflating it in well under a second of CPU', async () => {
    // 800 kB of noise, stored, and as many MiB of zeros as the bound of 50 times the archive allows
    const entries: RawEntry[] = [{ name: 'assets/noise.bin', data: randomBytes(800_000), method: 0 }];
    const unpacked = (list: RawEntry[]) =>
      list.reduce((sum, entry) => sum + (entry.uncompressedSize ?? entry.data!.length), 0);
    for (;;) {
      const more = [...entries, zeroMiB(`data/${entries.length}.bin`)];
      if (unpacked(more) > rawZip(more).length * UNPACKED_RATIO.total) break;
      entries.push(more[more.length - 1]);
    }
    const { path, bytes } = writeZip(entries);
    expect(bytes).toBeLessThan(1_000_000);
    const before = process.cpuUsage();
    const summary = await validateZip(path, { maxUnpacked: DEFAULT_MAX_UNPACKED, memory: new MemoryBudget(room) });
    const used = process.cpuUsage(before);
    summary.release();
    expect(summary.unpackedSize).toBeGreaterThan(bytes * UNPACKED_RATIO.total - MiB);
    // bench/zip-bomb.js measures it; a generous bound for a loaded machine (inflating 1 GiB took ~4 s)
    expect((used.user + used.system) / 1000).toBeLessThan(2000);
  });

  it('refuses an entry whose compression method differs between its local header and the central directory', async () => {
    const source = Buffer.from('print("hello")\n'.repeat(20));
    const stored = writeZip([{ name: 'a.py', data: source, method: 0, localMethod: 8 }]);
    expect((await refusal(stored.path, room)).error.message).toBe(
      'invalid archive: entry "a.py" uses compression method 8 in its local header but 0 in the central directory',
    );
    const deflated = writeZip([{ name: 'b.py', data: source, method: 8, localMethod: 0 }]);
    expect((await refusal(deflated.path, room)).error.message).toBe(
      'invalid archive: entry "b.py" uses compression method 0 in its local header but 8 in the central directory',
    );
  });
});

describe('the total bound, checked by the CLI before it publishes', () => {
  it('names an archive that expands more than the total ratio, as the registry would refuse it', () => {
    const limits = { max_archive: 200 * MiB, max_unpacked: DEFAULT_MAX_UNPACKED, max_entries: 100_000 };
    const archive = { size: MiB, unpackedSize: UNPACKED_RATIO.total * MiB + 1, entries: 60 };
    expect(limitProblems(limits, archive)).toEqual([
      `its files come to ${archive.unpackedSize} bytes unpacked, more than ${UNPACKED_RATIO.total} times the archive's ${MiB} bytes (registries refuse such zip bombs)`,
    ]);
    expect(limitProblems(limits, { ...archive, unpackedSize: UNPACKED_RATIO.total * MiB })).toEqual([]);
  });
});
