// The review flow from the CLI: `nodereg version appeal`, `nodereg admin queue` and `nodereg admin
// decide`, in process against a real registry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServer, type TestServer } from '../helpers.js';
import { client, createPublisher, createUser, makeZip, publish, uploadTo, type TestUser } from '../server/fixtures.js';

let server: TestServer;
let owner: TestUser;

const cli = (token: string, args: string[]) => runInProcess(['--registry', server.url, '--token', token, ...args]);

beforeAll(async () => {
  server = await startServer();
  owner = await createUser(server, 'olga');
  await createPublisher(server, owner, 'acme');
  const published = await publish(server, owner.token, 'acme', 'risky', '1.0.0');
  const zip = await makeZip({ 'run.py': 'import subprocess\nsubprocess.run(input(), shell=True)\n' });
  expect((await uploadTo(published.body.signedUrl, zip)).body.status).toBe('NodeVersionStatusFlagged');
});
afterAll(() => server.close());

describe('review commands', () => {
  it('appeal, queue, decide: the history grows and the status follows', async () => {
    const appealed = await cli(owner.token, ['version', 'appeal', 'risky', '1.0.0', '--message', 'reads a local file']);
    expect(appealed.code, appealed.stderr).toBe(0);
    expect(appealed.stdout).toContain('asked for a re-review of risky 1.0.0');

    const refused = await cli(owner.token, ['admin', 'queue']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('admin token');

    const queue = await cli(server.adminToken, ['admin', 'queue']);
    expect(queue.code, queue.stderr).toBe(0);
    expect(queue.stdout).toContain('risky@1.0.0');
    expect(queue.stdout).toContain('re-review requested');
    expect(queue.stdout).toContain('run.py:2');
    expect(queue.stdout).toContain('command-injection');

    const json = await cli(server.adminToken, ['--json', 'admin', 'queue']);
    expect(JSON.parse(json.stdout).versions[0]).toMatchObject({ node_id: 'risky', review_requested: true });

    const bad = await cli(server.adminToken, [
      'admin',
      'decide',
      'risky',
      '1.0.0',
      '--decision',
      'maybe',
      '--message',
      'x',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--decision');

    const decided = await cli(server.adminToken, [
      'admin',
      'decide',
      'risky',
      '1.0.0',
      '--decision',
      'approve',
      '--message',
      'a local file name',
    ]);
    expect(decided.code, decided.stderr).toBe(0);
    expect(decided.stdout).toContain('risky 1.0.0 is now');
    const read = await client(server).get('/nodes/risky/versions/1.0.0');
    expect(read.body.status).toBe('NodeVersionStatusActive');
    expect(JSON.parse(read.body.status_reason).statusHistory.map((e: { action?: string }) => e.action)).toEqual([
      undefined,
      'appeal',
      'approve',
    ]);

    const late = await cli(owner.token, ['version', 'appeal', 'risky', '1.0.0', '--message', 'again']);
    expect(late.code).not.toBe(0);
    expect(late.stderr).toContain('only a Flagged version');
  });
});
