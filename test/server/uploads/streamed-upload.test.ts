// The upload streams (DESIGN.md §5): a child process publishes a version and uploads a ~100 MB
// archive to the real registry with client.upload(), reporting how far its resident memory rose.
// Holding the body would need more than the archive's size; streaming measured about 40 MB of
// garbage between collections, so the bound leaves a wide margin both ways.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { startServer, tempDir } from '../../helpers.js';

const DIST = resolve(import.meta.dirname, '../../../dist');
const MiB = 1024 * 1024;

const script = `
import { readFileSync, createReadStream } from 'node:fs';
const status = (key) => Number(new RegExp(key + ':\\\\s+(\\\\d+)').exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const { createClient } = await import(process.env.DIST + '/client/index.js');
const { createPublisher, publishVersion } = await import(process.env.DIST + '/contract/registry.js');
const client = createClient({ baseUrl: process.env.URL, token: process.env.TOKEN });
await client.call(createPublisher, { body: { id: 'mem' } });
const published = await client.call(publishVersion, { params: { publisherId: 'mem', nodeId: 'big' }, body: { node_version: { version: '1.0.0' } } });
const before = status('VmRSS');
const version = await client.upload(published.signedUrl, { open: () => createReadStream(process.env.ZIP), size: Number(process.env.SIZE), sha256: process.env.SHA });
console.log(JSON.stringify({ growth: status('VmHWM') - before, status: version.status, size: version.archive_size }));
`;

it('uploads a ~100 MB archive with flat memory', async () => {
  const dir = tempDir('nodereg-upload-');
  writeFileSync(join(dir, 'weights.bin'), randomBytes(100 * MiB));
  const zip = join(dir, 'node.zip');
  execFileSync('zip', ['-q0', zip, 'weights.bin'], { cwd: dir }); // stored: quick to build
  const size = statSync(zip).size;
  const sha = createHash('sha256').update(readFileSync(zip)).digest('hex');
  const server = await startServer();
  try {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, DIST, URL: server.url, TOKEN: server.adminToken, ZIP: zip, SIZE: String(size), SHA: sha },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise((done) => child.on('close', done));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({ status: 'NodeVersionStatusActive', size });
    expect(report.growth).toBeLessThan(70 * MiB);
  } finally {
    await server.close();
  }
}, 60_000);
