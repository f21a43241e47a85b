// A zip shipped in the node and put on sys.path (or imported with zipimport) is read inside, by
// `nodereg scan` and by the registry's upload scan alike: its .py members get the rules, reported as
// `lib.zip/mod.py`. A zip nothing puts on the path is data. Past the bounds (size, members, bytes of
// Python, nesting), the scan says so with an info finding.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NESTED_ZIP } from '../../src/scan/nested-zip.js';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';
import { createPublisher, createUser, makeZip, publish, uploadTo, type TestUser } from '../server/fixtures.js';

const ON_PATH = `import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "lib.zip"))
NODE_CLASS_MAPPINGS = {}
`;
const AS_DATA = `import os
import zipfile

names = zipfile.ZipFile(os.path.join(os.path.dirname(__file__), "lib.zip")).namelist()
NODE_CLASS_MAPPINGS = {}
`;
const PAYLOAD = 'import os\n\n\ndef go():\n    os.system(os.environ["CMD"])\n';

const PYPROJECT = '[project]\nname = "zipped"\nversion = "1.0.0"\ndescription = "Zipped"\nlicense = "MIT"\n';

type Row = { file: string; line: number; rule: string; severity: string; message: string };
const rows = (findings: Row[]) => findings.map((f) => `${f.file}:${f.line} ${f.rule}`);

async function scanDir(files: Record<string, string | Buffer>) {
  const dir = writeTree(tempDir('nodereg-nested-zip-'), { 'pyproject.toml': PYPROJECT, ...files });
  const result = await runInProcess(['scan', dir, '--json', '--fail-on', 'critical']);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { findings: Row[]; skipped?: { file: string; reason: string }[] };
}

describe('nodereg scan: a zip put on sys.path', () => {
  it('its .py members are scanned, each finding at lib.zip/mod.py:line', async () => {
    const report = await scanDir({ '__init__.py': ON_PATH, 'lib.zip': await makeZip({ 'mod.py': PAYLOAD }) });
    expect(rows(report.findings)).toEqual([
      '__init__.py:4 environment-manipulation',
      'lib.zip/mod.py:5 command-injection',
    ]);
  });

  it('the same zip read as data is not scanned inside', async () => {
    const report = await scanDir({ '__init__.py': AS_DATA, 'lib.zip': await makeZip({ 'mod.py': PAYLOAD }) });
    expect(rows(report.findings)).toEqual([]);
  });

  it('site.addsitedir and zipimport.zipimporter of a zip of the node are followed too', async () => {
    const report = await scanDir({
      '__init__.py':
        'import os, site, zipimport\nHERE = os.path.dirname(__file__)\nsite.addsitedir(HERE + "/a.zip")\nzipimport.zipimporter(f"{HERE}/b.zip")\n',
      'a.zip': await makeZip({ 'pkg/a.py': PAYLOAD }),
      'b.zip': await makeZip({ 'b.py': 'import pickle\npickle.loads(b"")\n' }),
    });
    expect(rows(report.findings).filter((r) => r.includes('.zip/'))).toEqual([
      'a.zip/pkg/a.py:5 command-injection',
      'b.zip/b.py:2 unsafe-deserialization',
    ]);
  });

  it('past its bounds it says so (info), never silently: members, nesting, size, unreadable', async () => {
    const many = Object.fromEntries(
      Array.from({ length: NESTED_ZIP.maxMembers + 1 }, (_, i) => [`m${i}.py`, i === 0 ? PAYLOAD : 'x = 1\n']),
    );
    const inner = await makeZip({ 'deep.py': PAYLOAD });
    const report = await scanDir({
      '__init__.py': [
        'import os, sys',
        'HERE = os.path.dirname(__file__)',
        ...['many', 'nested', 'big', 'broken'].map((name) => `sys.path.append(os.path.join(HERE, "${name}.zip"))`),
        '',
      ].join('\n'),
      'many.zip': await makeZip(many),
      'nested.zip': await makeZip({
        'outer.py': 'import os, sys\nsys.path.append(os.path.join(os.path.dirname(__file__), "inner.zip"))\n',
        'inner.zip': inner,
      }),
      'big.zip': Buffer.alloc(NESTED_ZIP.maxBytes + 1),
      'broken.zip': 'not a zip',
    });
    const info = report.findings.filter((f) => f.rule === 'not-fully-analysed');
    expect(info.map((f) => f.severity)).toEqual(['info', 'info', 'info', 'info']);
    expect(info.map((f) => `${f.file} ${f.message}`)).toEqual([
      expect.stringMatching(/^big\.zip .*over the 4194304 bytes the scan reads/),
      expect.stringMatching(/^broken\.zip .*could not be read as a zip/),
      expect.stringMatching(/^many\.zip .*holds 1001 members: only the first 1000 were read/),
      expect.stringMatching(/^nested\.zip .*outer\.py, which runs inner\.zip .*not followed/),
    ]);
    // the members within the bound are read
    expect(rows(report.findings)).toContain('many.zip/m0.py:5 command-injection');
  });
});

describe('the registry: a zip put on sys.path', () => {
  let server: TestServer;
  let owner: TestUser;
  beforeAll(async () => {
    server = await startServer();
    owner = await createUser(server);
    await createPublisher(server, owner, 'acme');
  });
  afterAll(() => server.close());

  async function upload(nodeId: string, files: Record<string, string | Buffer>) {
    const published = await publish(server, owner.token, 'acme', nodeId, '1.0.0');
    expect(published.status, published.text).toBe(201);
    const uploaded = await uploadTo(published.body.signedUrl, await makeZip(files));
    expect(uploaded.status, uploaded.text).toBe(200);
    return uploaded.body;
  }

  it('its members are scanned: a finding there flags the version', async () => {
    const version = await upload('zip-on-path', {
      '__init__.py': ON_PATH,
      'lib.zip': await makeZip({ 'mod.py': PAYLOAD }),
    });
    expect(version).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: command-injection at lib.zip/mod.py:5',
    });
  });

  it('the same zip shipped as data: Active', async () => {
    const version = await upload('zip-as-data', {
      '__init__.py': AS_DATA,
      'lib.zip': await makeZip({ 'mod.py': PAYLOAD }),
    });
    expect(version.status).toBe('NodeVersionStatusActive');
    expect(version.findings).toEqual([]);
  });
});
