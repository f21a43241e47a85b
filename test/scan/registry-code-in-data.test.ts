// The registry's upload scan reads what `nodereg scan` reads: a shipped file that the code runs as Python
// (SourceFileLoader on a .txt, code-in-data) as Python, requirements.txt and .pth files by line, and
// the calls only the resolution layer finds (a helper of the package that runs pip), also in a node
// small enough for the text gate on the event loop, which passed over all three.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { createPublisher, createUser, makeZip, publish, uploadTo, type TestUser } from '../server/fixtures.js';

const LOADER = `import os
from importlib.machinery import SourceFileLoader
HERE = os.path.dirname(__file__)
hooks = SourceFileLoader("hooks", os.path.join(HERE, "data", "hooks.txt")).load_module()
NODE_CLASS_MAPPINGS = {}
`;
const HIDDEN = 'import os\n\ndef go(cmd):\n    return eval(cmd)\n';

describe('code in data files, on the registry', () => {
  let server: TestServer;
  let owner: TestUser;
  beforeAll(async () => {
    server = await startServer();
    owner = await createUser(server);
    await createPublisher(server, owner, 'acme');
  });
  afterAll(() => server.close());

  async function upload(nodeId: string, files: Record<string, string>) {
    const published = await publish(server, owner.token, 'acme', nodeId, '1.0.0');
    expect(published.status, published.text).toBe(201);
    const uploaded = await uploadTo(published.body.signedUrl, await makeZip(files));
    expect(uploaded.status, uploaded.text).toBe(200);
    return uploaded.body;
  }

  it('a .txt loaded with SourceFileLoader is scanned as Python: its eval flags the version', async () => {
    const version = await upload('loads-text', { '__init__.py': LOADER, 'data/hooks.txt': HIDDEN });
    expect(version).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: dynamic-execution at data/hooks.txt:4',
    });
    expect(version.findings.map((f: { rule: string; file: string }) => `${f.rule} ${f.file}`)).toEqual([
      'dynamic-execution data/hooks.txt',
      'code-in-data __init__.py',
    ]);
  });

  it('the same .txt that nothing loads is data: Active', async () => {
    const version = await upload('keeps-text', {
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      'data/hooks.txt': HIDDEN,
    });
    expect(version.status).toBe('NodeVersionStatusActive');
    expect(version.findings).toEqual([]);
  });

  it('a small node whose requirements.txt installs from another index, or whose .pth runs code, is Flagged', async () => {
    const index = await upload('extra-index', {
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      'requirements.txt': 'numpy\n--extra-index-url https://example.org/simple\n',
    });
    expect(index).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: unsafe-requirement at requirements.txt:2',
    });
    const pth = await upload('pth-file', {
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      'startup.pth': 'import os; os.getcwd()\n',
    });
    expect(pth).toMatchObject({ status: 'NodeVersionStatusFlagged', status_reason: 'scan: pth-file at startup.pth:1' });
  });

  it("a pip install through the package's own helper is found at the call site in a small node", async () => {
    const version = await upload('helper-pip', {
      'helpers.py': 'import subprocess\n\ndef run_script(args):\n    return subprocess.run(args)\n',
      '__init__.py':
        'from .helpers import run_script\n\nrun_script(["pip", "install", "numpy"])\nNODE_CLASS_MAPPINGS = {}\n',
    });
    expect(version).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: expect.stringMatching(/^scan: runtime-install at __init__\.py:3/),
    });
  });
});
