// Packing holds memory flat (DESIGN.md §6: streamed, never a whole file or the archive in memory):
// a 3,000-file, ~90 MB tree of incompressible data is packed in a child process that reports how far
// its resident memory rose above where it stood before packing. Holding the archive would need more
// than the tree's size; the bound leaves a wide margin below that and above the ~50 MiB measured
// with two worker threads (each ~8 MiB to start and ~8 MiB of zlib's buffers between collections;
// fixed at two so the test weighs the same on any machine), as much as with 2,000 files.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from '../helpers.js';

const DIST = resolve(import.meta.dirname, '../../dist/package');
const MiB = 1024 * 1024;

const script = `
import { readFileSync } from 'node:fs';
const status = (key) => Number(new RegExp(key + ':\\\\s+(\\\\d+)').exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const { selectFiles } = await import(process.env.DIST + '/files.js');
const { writeArchive } = await import(process.env.DIST + '/zip.js');
const files = selectFiles(process.env.ROOT).files;
const before = status('VmRSS');
const result = await writeArchive(files, process.env.OUT, { workers: 2 });
console.log(JSON.stringify({ growth: status('VmHWM') - before, files: result.files, size: result.size }));
`;

it('packs a 3,000-file, ~90 MB tree with flat memory', () => {
  const root = tempDir('nodereg-mem-');
  const block = randomBytes(2 * MiB);
  let total = 0;
  for (let i = 0; i < 3000; i++) {
    const dir = join(root, `d${i % 40}`);
    mkdirSync(dir, { recursive: true });
    const size = i < 5 ? 1_500_000 : 28_000; // a few large files take the streamed path
    const offset = (i * 7919) % (block.length - size);
    writeFileSync(join(dir, `f${i}.dat`), block.subarray(offset, offset + size));
    total += size;
  }
  expect(total).toBeGreaterThan(90 * 1e6);
  const out = join(tempDir(), 'out.zip');
  const report = JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, DIST, ROOT: root, OUT: out },
      encoding: 'utf8',
    }),
  );
  expect(report.files).toBe(3000);
  expect(report.size).toBe(statSync(out).size);
  expect(report.growth).toBeLessThan(70 * MiB);
}, 60_000);
