// Ctrl-C before the publish request is sent (while the scan, the pack or the registry's limits are
// awaited): the CLI says that nothing reached the registry, removes its archive and exits 130. It
// exited 130 without a word. Spawned: the signal is the point. The registry is a stand-in that takes
// GET /limits and never answers, so the run is held before the publish request.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, INSTALLED_BIN, tempDir } from '../helpers.js';
import { checkHints } from '../cli/hint-check.js';
import { writeTree } from '../package/fixtures.js';

const requests: string[] = [];
const stalled = createServer((request) => requests.push(`${request.method} ${request.url}`)); // never answers
let url: string;
beforeAll(async () => {
  stalled.listen(0, '127.0.0.1');
  await once(stalled, 'listening');
  url = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
});
afterAll(() => {
  stalled.closeAllConnections();
  stalled.close();
});

describe('interrupting publish before the publish request', () => {
  it('Ctrl-C while the registry limits are awaited says nothing was sent, removes the archive, exits 130', async () => {
    const dir = writeTree(tempDir('nodereg-interrupted-'), {
      'pyproject.toml':
        '[project]\nname = "held-node"\nversion = "1.0.0"\ndescription = "Held"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "acme"\n',
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    });
    const tmp = tempDir('nodereg-tmpdir-');
    const child = spawn(process.execPath, [INSTALLED_BIN, 'publish', dir], {
      env: { ...cliEnv(tempDir()), TMPDIR: tmp, NODEREG_REGISTRY: url, NODEREG_TOKEN: 'nrg_u_placeholder' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    for (let i = 0; i < 200 && !requests.includes('GET /limits'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(requests).toContain('GET /limits');
    // the pack is done once its temporary dir holds the archive (or sooner: the signal removes it either way)
    child.kill('SIGINT');
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(130);
    await checkHints('', stderr);
    expect(stderr).toContain(
      'error: interrupted before the publish request: nothing of held-node 1.0.0 was sent to the registry',
    );
    expect(stderr).toContain('hint: run the same command again to publish it');
    expect(requests.filter((r) => r.startsWith('POST'))).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
