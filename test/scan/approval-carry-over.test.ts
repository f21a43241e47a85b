// Approval that carries over (DESIGN.md §10): an admin who makes a Flagged version Active approves its
// high findings for the node; a later version with the same findings (moved, variables renamed) becomes
// Active by itself and its status_reason says so; a version with a new high finding is Flagged as
// before; `nodereg scan --node ID` shows which findings the registry approved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';
import { client, createPublisher, createUser, makeZip, publish, uploadTo, type TestUser } from '../server/fixtures.js';

const INSTALL_V1 = `import subprocess, sys

def setup():
    packages = ["numpy"]
    subprocess.check_call([sys.executable, "-m", "pip", "install", *packages])
`;
// the same install, 10 lines lower, its variable renamed, a comment and other code around it
const INSTALL_V2 = `import subprocess, sys
${Array.from({ length: 10 }, (_, i) => `VALUE_${i} = ${i}`).join('\n')}

def setup():
    # what the node needs at run time
    wanted = ["numpy"]
    subprocess.check_call([sys.executable,  "-m", "pip", "install", *wanted])
`;
const NEW_FINDING = `${INSTALL_V2}

def run(source):
    return eval(source)
`;

const files = (run: string) => ({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n', 'nodes/run.py': run });

describe('approval that carries over', () => {
  let server: TestServer;
  let owner: TestUser;
  let stranger: TestUser;
  beforeAll(async () => {
    server = await startServer();
    owner = await createUser(server);
    stranger = await createUser(server);
    await createPublisher(server, owner, 'acme');
  });
  afterAll(() => server.close());

  async function upload(version: string, run: string) {
    const published = await publish(server, owner.token, 'acme', 'carried', version);
    expect(published.status, published.text).toBe(201);
    const uploaded = await uploadTo(published.body.signedUrl, await makeZip(files(run)));
    expect(uploaded.status, uploaded.text).toBe(200);
    return uploaded.body;
  }

  it('v1 Flagged and approved by an admin; v2 with the finding moved and renamed Active by itself; v3 with a new finding Flagged', async () => {
    const api = client(server);
    const v1 = await upload('1.0.0', INSTALL_V1);
    expect(v1).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: runtime-install at nodes/run.py:5',
    });
    // nothing approved yet: the same finding in another version stays flagged
    const before = await upload('1.0.1', INSTALL_V2);
    expect(before.status).toBe('NodeVersionStatusFlagged');

    const approved = await api.put('/publishers/acme/nodes/carried/versions/1.0.0', {
      token: server.adminToken,
      body: { status: 'NodeVersionStatusActive', status_reason: 'reviewed: installs its own dependency' },
    });
    expect(approved.status, approved.text).toBe(200);

    const v2 = await upload('2.0.0', INSTALL_V2);
    expect(v2.status).toBe('NodeVersionStatusActive');
    expect(v2.status_reason).toBe(
      'scan: not flagged: an admin approved every high finding in an earlier version: runtime-install at nodes/run.py:16 (as in 1.0.0)',
    );
    expect(v2.findings.map((f: { rule: string; line: number }) => `${f.rule}:${f.line}`)).toEqual([
      'runtime-install:16',
    ]);

    const v3 = await upload('3.0.0', NEW_FINDING);
    expect(v3).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'scan: runtime-install at nodes/run.py:16, dynamic-execution at nodes/run.py:20',
    });
  });

  it('an admin who flags, bans or leaves a version Flagged approves nothing; the approved findings are for members and admins', async () => {
    const api = client(server);
    const listed = await api.get('/nodes/carried/approved-findings', { token: owner.token });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.approved).toEqual([
      {
        fingerprint: expect.stringMatching(/^[0-9a-f]{24}$/),
        rule: 'runtime-install',
        version: '1.0.0',
        approved_at: expect.any(String),
      },
    ]);
    // 3.0.0 (Flagged) banned, then 1.0.1 (Flagged) given a new reason but left Flagged: no new approval
    for (const [version, status] of [
      ['3.0.0', 'NodeVersionStatusBanned'],
      ['1.0.1', 'NodeVersionStatusFlagged'],
    ] as const) {
      const changed = await api.put(`/publishers/acme/nodes/carried/versions/${version}`, {
        token: server.adminToken,
        body: { status, status_reason: 'reviewed' },
      });
      expect(changed.status, changed.text).toBe(200);
    }
    expect(
      (await api.get('/nodes/carried/approved-findings', { token: server.adminToken })).body.approved,
    ).toHaveLength(1);
    expect((await api.get('/nodes/carried/approved-findings', { token: stranger.token })).status).toBe(403);
    expect((await api.get('/nodes/carried/approved-findings')).status).toBe(401);
  });

  it('`nodereg scan --registry URL --node ID` marks the findings the registry approved, and only those', async () => {
    const dir = writeTree(tempDir('nodereg-approved-'), {
      'pyproject.toml': '[project]\nname = "carried"\nversion = "4.0.0"\ndescription = "Carried"\nlicense = "MIT"\n',
      ...files(NEW_FINDING),
    });
    const env = { NODEREG_TOKEN: owner.token };
    const json = await runInProcess(['--registry', server.url, 'scan', dir, '--node', 'carried', '--json'], { env });
    expect(json.stderr).toBe('');
    const report = JSON.parse(json.stdout);
    expect(report.approved).toBe(1);
    expect(report.findings.map((f: { rule: string; approved?: boolean }) => [f.rule, f.approved ?? false])).toEqual([
      ['runtime-install', true],
      ['dynamic-execution', false],
    ]);
    const text = await runInProcess(['--registry', server.url, 'scan', dir, '--node', 'carried'], { env });
    expect(text.stdout).toMatch(/runtime-install .*\(approved by the registry\)/);
    expect(text.stdout).not.toMatch(/dynamic-execution .*approved/);
    expect(text.stdout).toContain('1 approved by the registry');
    expect(text.code).toBe(1);
  });

  it("an admin's approval in the review flow approves the findings as the status update does", async () => {
    const api = client(server);
    const flagged = await upload('5.0.0', `${NEW_FINDING}\n\ndef more(code):\n    return exec(code)\n`);
    expect(flagged.status).toBe('NodeVersionStatusFlagged');
    const decided = await api.post('/admin/nodes/carried/versions/5.0.0/decision', {
      token: server.adminToken,
      body: { decision: 'approve', message: 'reviewed: our own templates' },
    });
    expect(decided.status, decided.text).toBe(200);
    const approved = (await api.get('/nodes/carried/approved-findings', { token: owner.token })).body.approved;
    expect(approved.map((a: { rule: string; version: string }) => `${a.rule} ${a.version}`)).toEqual([
      'runtime-install 1.0.0',
      'dynamic-execution 5.0.0',
      'dynamic-execution 5.0.0',
    ]);
  });
});
