// Output is complete on a pipe: the spawned binary's stdout read through a pipe holds the same bytes
// as the same command's stdout written to a file, and the exit code is 0. Each run here prints more
// than a pipe holds (64 KiB); together they read more than 1 MiB through pipes.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv, tempDir } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';

const home = tempDir('nodereg-home-');

/**
 * The command's stdout read through an OS pipe (64 KiB), as `nodereg … | cat` in a shell, by a reader
 * that lags behind like a busy CI runner: after the first chunk it stops for a while, so the writer
 * meets a full pipe. `pipefail` gives nodereg's exit code.
 */
function throughPipe(args: string[], cwd: string): Promise<{ code: number | null; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const pipeline = ['-o', 'pipefail', '-c', '"$@" | cat', 'bash', process.execPath, BIN, ...args];
    const child = spawn('bash', pipeline, { cwd, env: cliEnv(home), stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), chunks.length === 1 ? 300 : 1);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, bytes: Buffer.concat(chunks) }));
  });
}

/** The command's stdout written to a file. */
function toFile(args: string[], cwd: string): Promise<{ code: number | null; bytes: Buffer }> {
  const file = join(tempDir(), 'out');
  const fd = openSync(file, 'w');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: cliEnv(home), stdio: ['ignore', fd, 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => {
      closeSync(fd);
      resolve({ code, bytes: readFileSync(file) });
    });
  });
}

async function samePipedAndFiled(args: string[], cwd: string): Promise<number> {
  const [piped, filed] = await Promise.all([throughPipe(args, cwd), toFile(args, cwd)]);
  expect(filed.code).toBe(0);
  expect(piped.code).toBe(0);
  expect(piped.bytes.length).toBe(filed.bytes.length);
  expect(piped.bytes.equals(filed.bytes)).toBe(true);
  return piped.bytes.length;
}

// 1,600 files under long directory names: each line of the file list is ~700 bytes.
let bigNode: string;
beforeAll(() => {
  const deep = Array.from({ length: 3 }, (_, i) => `${String.fromCharCode(97 + i)}${'x'.repeat(200)}`).join('/');
  const files: Record<string, string> = {
    'pyproject.toml': '[project]\nname = "big-node"\nversion = "1.0.0"\n\n[tool.nodereg]\npublisher = "ada"\n',
    '__init__.py': '',
  };
  for (let i = 0; i < 1_600; i++) files[`${deep}/${String(i).padStart(4, '0')}-${'y'.repeat(80)}.py`] = `# ${i}\n`;
  bigNode = writeTree(tempDir('nodereg-big-'), files);
});

describe('output through a pipe', () => {
  it('nodereg openapi: the whole document', async () => {
    const size = await samePipedAndFiled(['openapi'], tempDir());
    expect(size).toBeGreaterThan(200_000);
  });

  it('nodereg pack --list of a big tree: every line', async () => {
    const out = join(tempDir(), 'big.zip');
    const size = await samePipedAndFiled(['pack', bigNode, '--list', '--out', out], tempDir());
    expect(size).toBeGreaterThan(1024 * 1024);
  });

  it('nodereg publish --dry-run --json of a big tree: one whole JSON document', async () => {
    const piped = await throughPipe(['publish', bigNode, '--dry-run', '--json'], tempDir());
    expect(piped.code).toBe(0);
    expect(piped.bytes.length).toBeGreaterThan(1024 * 1024);
    expect(JSON.parse(piped.bytes.toString('utf8')).file_list).toHaveLength(1_602);
    await samePipedAndFiled(['publish', bigNode, '--dry-run', '--json'], tempDir());
  });
});
