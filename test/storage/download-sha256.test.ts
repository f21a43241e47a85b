// Downloads carry the SHA-256 recorded at upload (X-Content-SHA256, the contract's DownloadHeaders), and
// `nodereg node download` refuses bytes that do not hash to it, leaving no file behind: an archive
// object replaced under the registry (the issue [operate]'s two registries on one bucket) is caught.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SHA256_HEADER } from '../../src/contract/upload.js';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('the SHA-256 of a download', () => {
  it('is announced in X-Content-SHA256 as recorded, and node download refuses other bytes, saving nothing', async () => {
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'acme');
    const zip = await makeZip({ 'node.py': '# the first archive\n' });
    await publishAndUpload(server, alice.token, 'acme', 'mynode', '1.4.0', {}, zip);
    const download = await fetch(`${server.url}/archives/acme/mynode/1.4.0/node.zip`);
    expect(download.headers.get(CONTENT_SHA256_HEADER)).toBe(sha256(zip));
    await download.arrayBuffer();

    const cli = (args: string[]) => runInProcess(['--registry', server.url, '--token', alice.token, ...args]);
    const good = join(tempDir(), 'good.zip');
    expect((await cli(['node', 'download', 'mynode@1.4.0', '--out', good])).code).toBe(0);
    expect(existsSync(good)).toBe(true);

    // Other bytes put in place under the registry: served with the first archive's recorded SHA-256.
    const other = Buffer.from(zip);
    other[zip.length - 30] ^= 0xff; // as long as the first, so that only its hash can tell
    writeFileSync(join(server.dataDir, 'archives/acme/mynode/1.4.0/node.zip'), other);
    const out = join(tempDir(), 'vendor', 'mynode.zip');
    const refused = await cli(['node', 'download', 'mynode@1.4.0', '--out', out]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(sha256(zip));
    expect(refused.stderr).toContain(sha256(other));
    expect(refused.stderr).toContain('nothing was saved');
    expect(existsSync(dirname(out)) ? readdirSync(dirname(out)) : []).toEqual([]);
  });
});
