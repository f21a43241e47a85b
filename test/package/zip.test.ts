// The archive (DESIGN.md §6): deterministic bytes, the zip fields we promise, a valid zip for unzip,
// stored formats, the size limit, and files that change while being packed.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync, truncateSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { selectFiles, type SelectedFile } from '../../src/package/files.js';
import { ArchiveTooLargeError, FileChangedError, startPool, writeArchive } from '../../src/package/zip.js';
import { tempDir } from '../helpers.js';
import { writeTree } from './fixtures.js';

const text = (n: number) => Array.from({ length: n }, (_, i) => `line ${i} of some text\n`).join('');

function sampleTree(): Record<string, string | Buffer> {
  return {
    'node.py': text(200),
    'web/app.js': text(50),
    'web/logo.png': randomBytes(5000),
    'models/weights.safetensors': randomBytes(3000),
    'big/data.txt': text(80_000), // over the small-file size: streamed
    'big/blob.bin': randomBytes(1_500_000),
    'empty.txt': '',
    'é/日本語.txt': 'こんにちは',
    '🎉.md': '# party',
    'Z.txt': 'upper',
    'a.txt': 'lower',
  };
}

interface ZipEntryInfo {
  name: string;
  method: number;
  utf8: boolean;
  extraFields: number;
  dosDate: number;
  dosTime: number;
  mode: number;
  data: Buffer;
}

async function readZip(path: string): Promise<ZipEntryInfo[]> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, decodeStrings: true }, (err, z) => (err ? reject(err) : resolve(z!))),
  );
  const entries: ZipEntryInfo[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream!.on('data', (c: Buffer) => chunks.push(c));
        stream!.on('end', () => {
          entries.push({
            name: entry.fileName,
            method: entry.compressionMethod,
            utf8: (entry.generalPurposeBitFlag & 0x800) !== 0,
            extraFields: entry.extraFields.length,
            dosDate: entry.lastModFileDate,
            dosTime: entry.lastModFileTime,
            mode: (entry.externalFileAttributes >>> 16) & 0o777,
            data: Buffer.concat(chunks),
          });
          zip.readEntry();
        });
      });
    });
    zip.on('end', resolve);
    zip.on('error', reject);
    zip.readEntry();
  });
  return entries;
}

async function pack(root: string, out: string, maxSize?: number) {
  return writeArchive(selectFiles(root).files, out, { maxSize });
}

describe('writeArchive', () => {
  it('writes the same bytes for the same tree, whatever the mtimes, the umask or the order listed', async () => {
    const files = sampleTree();
    const a = writeTree(tempDir(), files);
    const b = writeTree(tempDir(), Object.fromEntries(Object.entries(files).reverse()));
    utimesSync(join(b, 'node.py'), new Date('2001-02-03'), new Date('2001-02-03'));
    chmodSync(join(b, 'a.txt'), 0o600);
    const out = tempDir();
    const first = await pack(a, join(out, 'a.zip'));
    const second = await writeArchive([...selectFiles(b).files].reverse(), join(out, 'b.zip'));
    expect(readFileSync(join(out, 'a.zip')).equals(readFileSync(join(out, 'b.zip')))).toBe(true);
    expect(second.sha256).toBe(first.sha256);
  });

  it('writes the same bytes with files deflated ahead while they were listed (startPool) as with no worker', async () => {
    // ~12 MiB of small files: the first 8 MiB found go ahead in the order found, the rest in path order;
    // one file found and sent ahead is then left out of the archive, as pack leaves out its --out.
    const files: Record<string, string | Buffer> = {
      'big/blob.bin': randomBytes(1_200_000),
      'left-out.txt': text(300),
    };
    for (let i = 0; i < 1500; i++) files[`src/p${i % 13}/m${i}.py`] = text(200 + ((i * 53) % 250));
    for (let i = 0; i < 10; i++) files[`noise${i}.txt`] = randomBytes(3000);
    const root = writeTree(tempDir(), files);
    const out = tempDir();
    const pool = startPool();
    const listed = selectFiles(root, { onFile: pool?.offer }).files;
    if (pool) expect(pool.early.size).toBeGreaterThan(300);
    const kept = listed.filter((f) => f.path !== 'left-out.txt');
    const ahead = await writeArchive(kept, join(out, 'ahead.zip'), { pool });
    const none = await writeArchive(kept, join(out, 'none.zip'), { workers: 0 });
    expect(readFileSync(join(out, 'ahead.zip')).equals(readFileSync(join(out, 'none.zip')))).toBe(true);
    expect(ahead.sha256).toBe(none.sha256);
    expect(execFileSync('unzip', ['-t', join(out, 'ahead.zip')], { encoding: 'utf8' })).toMatch(/No errors detected/);
  });

  it('writes the same bytes with 1 and with 4 worker threads, and with none', async () => {
    // Many small files finish deflating out of order when several run at once; the bytes may not care.
    const files: Record<string, string | Buffer> = {
      'big/data.txt': text(60_000),
      'big/blob.bin': randomBytes(1_200_000),
    };
    for (let i = 0; i < 300; i++) files[`src/m${i}.py`] = text(20 + ((i * 37) % 400));
    for (let i = 0; i < 10; i++) files[`noise${i}.txt`] = randomBytes(3000); // deflate would not shrink it
    const root = writeTree(tempDir(), files);
    const out = tempDir();
    const one = await writeArchive(selectFiles(root).files, join(out, 'one.zip'), { workers: 1 });
    const four = await writeArchive(selectFiles(root).files, join(out, 'four.zip'), { workers: 4 });
    const none = await writeArchive(selectFiles(root).files, join(out, 'none.zip'), { workers: 0 });
    expect(readFileSync(join(out, 'one.zip')).equals(readFileSync(join(out, 'four.zip')))).toBe(true);
    expect(readFileSync(join(out, 'none.zip')).equals(readFileSync(join(out, 'four.zip')))).toBe(true);
    expect(four.sha256).toBe(one.sha256);
    expect(none.sha256).toBe(one.sha256);
    expect(execFileSync('unzip', ['-t', join(out, 'four.zip')], { encoding: 'utf8' })).toMatch(/No errors detected/);
    const methods = Object.fromEntries((await readZip(join(out, 'four.zip'))).map((e) => [e.name, e.method]));
    expect(methods).toMatchObject({ 'noise0.txt': 0, 'src/m0.py': 8, 'big/data.txt': 8 });
  });

  it('reports the sha256 and size of the bytes written, and the file count', async () => {
    const root = writeTree(tempDir(), sampleTree());
    const out = join(tempDir(), 'x.zip');
    const result = await pack(root, out);
    const bytes = readFileSync(out);
    expect(result.size).toBe(bytes.length);
    expect(result.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(result.files).toBe(11);
    expect(result.unpackedSize).toBe(selectFiles(root).files.reduce((s, f) => s + f.size, 0));
  });

  it('passes unzip -t, and holds exactly the files, in UTF-8 byte order, with the promised fields', async () => {
    const files = sampleTree();
    const root = writeTree(tempDir(), files);
    chmodSync(join(root, 'node.py'), 0o755);
    const out = join(tempDir(), 'x.zip');
    await pack(root, out);
    expect(execFileSync('unzip', ['-t', out], { encoding: 'utf8' })).toMatch(/No errors detected/);

    const entries = await readZip(out);
    expect(entries.map((e) => e.name)).toEqual([
      'Z.txt',
      'a.txt',
      'big/blob.bin',
      'big/data.txt',
      'empty.txt',
      'models/weights.safetensors',
      'node.py',
      'web/app.js',
      'web/logo.png',
      'é/日本語.txt',
      '🎉.md',
    ]);
    for (const entry of entries) {
      expect(entry.data.equals(Buffer.from(files[entry.name]))).toBe(true);
      expect(entry.utf8).toBe(true);
      expect(entry.extraFields).toBe(0);
      expect(entry.dosDate).toBe((0 << 9) | (1 << 5) | 1); // 1980-01-01
      expect(entry.dosTime).toBe(0); // 00:00:00
      expect(entry.mode).toBe(entry.name === 'node.py' ? 0o755 : 0o644);
    }
    const methods = Object.fromEntries(entries.map((e) => [e.name, e.method]));
    expect(methods).toMatchObject({
      'web/logo.png': 0,
      'models/weights.safetensors': 0,
      'big/blob.bin': 0,
      'node.py': 8,
      'big/data.txt': 8,
      'web/app.js': 8,
    });
  });

  it('fails past --max-size, lists the ten largest files and leaves no partial archive', async () => {
    const files: Record<string, Buffer> = {};
    for (let i = 0; i < 14; i++) files[`f${String(i).padStart(2, '0')}.bin`] = randomBytes(10_000 + i * 1000);
    const root = writeTree(tempDir(), files);
    const out = join(tempDir(), 'x.zip');
    const error = await pack(root, out, 50_000).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArchiveTooLargeError);
    expect((error as ArchiveTooLargeError).largest.map((f) => f.path)).toEqual([
      'f13.bin',
      'f12.bin',
      'f11.bin',
      'f10.bin',
      'f09.bin',
      'f08.bin',
      'f07.bin',
      'f06.bin',
      'f05.bin',
      'f04.bin',
    ]);
    expect(existsSync(out)).toBe(false);
    // at the limit exactly, it passes
    const fits = await pack(root, join(tempDir(), 'y.zip'));
    expect((await pack(root, join(tempDir(), 'z.zip'), fits.size)).size).toBe(fits.size);
  });

  it.each([
    ['small', 100, 0],
    ['small', 100, 2],
    ['large', 2_000_000, 0],
  ])('reports a %s file that changed size while being packed (%i bytes, %i workers)', async (_kind, size, workers) => {
    const root = writeTree(tempDir(), { 'a.txt': Buffer.alloc(size, 97) });
    const listed: SelectedFile = { ...selectFiles(root).files[0] };
    listed.size = statSync(join(root, 'a.txt')).size + 5;
    const out = join(tempDir(), 'x.zip');
    const error = await writeArchive([listed], out, { workers }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FileChangedError);
    expect((error as Error).message).toBe('a.txt changed while it was being packed; pack again');
    expect(existsSync(out)).toBe(false);
  });

  it('refuses a file over 4 GiB by name before reading it (a sparse 5 GiB file that deflates small was read whole, then failed in the writer)', async () => {
    const root = writeTree(tempDir(), { 'pkg/__init__.py': 'x = 1\n', 'big.dat': '' });
    truncateSync(join(root, 'big.dat'), 5 * 1024 ** 3); // sparse: takes no disk
    const started = performance.now();
    await expect(writeArchive(selectFiles(root).files, join(tempDir(), 'x.zip'))).rejects.toThrow(
      'big.dat is 5.0 GiB; an archive holds no file over 4 GiB (leave it out with [tool.nodereg] excludes or a .noderegignore file)',
    );
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it.each([0, 2])('reports a file that vanished before it was packed (%i workers)', async (workers) => {
    const root = writeTree(tempDir(), { 'a.txt': 'x' });
    const gone: SelectedFile = { path: 'b.txt', abs: join(root, 'b.txt'), size: 3, mode: 0o644 };
    const out = join(tempDir(), 'x.zip');
    await expect(writeArchive([...selectFiles(root).files, gone], out, { workers })).rejects.toThrow(/ENOENT/);
    expect(existsSync(out)).toBe(false);
  });
});
