// The review flow over the API and the pages' forms: a member asks for a re-review of a Flagged
// version, an admin sees it in the queue with its findings and decides; every step is an entry of
// the status history in `status_reason` ({message, by, statusHistory}), which everyone reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { client, createPublisher, createUser, makeZip, publish, uploadTo, type TestUser } from '../server/fixtures.js';
import { webClient } from './web-client.js';

let server: TestServer;
let owner: TestUser;
let stranger: TestUser;

async function flagged(nodeId: string) {
  const published = await publish(server, owner.token, 'acme', nodeId, '1.0.0');
  const zip = await makeZip({ 'run.py': 'import subprocess\nsubprocess.run(input(), shell=True)\n' });
  const uploaded = await uploadTo(published.body.signedUrl, zip);
  expect(uploaded.body.status).toBe('NodeVersionStatusFlagged');
}

beforeAll(async () => {
  server = await startServer();
  owner = await createUser(server, 'olga');
  stranger = await createUser(server, 'sam');
  await createPublisher(server, owner, 'acme');
  await flagged('first');
  await flagged('second');
});
afterAll(() => server.close());

describe('over the API', () => {
  it('appeal, queue, approve: each step an entry of the history that everyone reads', async () => {
    const api = client(server);
    const appealPath = '/publishers/acme/nodes/first/versions/1.0.0/appeal';
    expect((await api.post(appealPath, { token: stranger.token, body: { message: 'mine?' } })).status).toBe(403);
    expect((await api.post(appealPath, { token: owner.token, body: { message: '' } })).status).toBe(400);
    const appealed = await api.post(appealPath, {
      token: owner.token,
      body: { message: 'input() is the node author’s own' },
    });
    expect(appealed.status, appealed.text).toBe(200);
    expect(JSON.parse(appealed.body.status_reason)).toMatchObject({
      message: 'input() is the node author’s own',
      by: 'olga',
      statusHistory: [
        { status: 'NodeVersionStatusFlagged', message: 'scan: command-injection at run.py:2' },
        { status: 'NodeVersionStatusFlagged', action: 'appeal', by: 'olga' },
      ],
    });

    expect((await api.get('/admin/review-queue', { token: owner.token })).status).toBe(403);
    const queue = await api.get('/admin/review-queue', { token: server.adminToken });
    expect(queue.body.versions.map((v: any) => [v.node_id, v.review_requested, v.findings.length > 0])).toEqual([
      ['first', true, true],
      ['second', false, true],
    ]);

    const decisionPath = '/admin/nodes/first/versions/1.0.0/decision';
    expect(
      (await api.post(decisionPath, { token: owner.token, body: { decision: 'approve', message: 'ok' } })).status,
    ).toBe(403);
    const approved = await api.post(decisionPath, {
      token: server.adminToken,
      body: { decision: 'approve', message: 'the input is a local file name' },
    });
    expect(approved.status, approved.text).toBe(200);
    const read = await api.get('/nodes/first/versions/1.0.0');
    expect(read.body.status).toBe('NodeVersionStatusActive');
    const reason = JSON.parse(read.body.status_reason);
    expect(reason).toMatchObject({ message: 'the input is a local file name', by: 'admin' });
    expect(reason.statusHistory.map((e: any) => [e.status, e.action])).toEqual([
      ['NodeVersionStatusFlagged', undefined],
      ['NodeVersionStatusFlagged', 'appeal'],
      ['NodeVersionStatusActive', 'approve'],
    ]);
    expect(reason.statusHistory[2].at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // an Active version is no longer in the queue, nor open to an appeal
    const after = await api.get('/admin/review-queue', { token: server.adminToken });
    expect(after.body.versions.map((v: any) => v.node_id)).toEqual(['second']);
    expect((await api.post(appealPath, { token: owner.token, body: { message: 'again' } })).status).toBe(409);
  });
});

describe('through the pages', () => {
  it('a member asks on the version page, the admin bans from the queue; the reason shows to everyone', async () => {
    const member = webClient(server);
    await member.signIn(owner.token);
    const page = await member.get('/nodes/second/versions/1.0.0');
    expect(page.text).toContain('Ask for a re-review');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    expect(
      (await member.post('/web/nodes/second/versions/1.0.0/appeal', { csrf, message: 'please look' })).status,
    ).toBe(303);
    expect((await member.get('/web/review')).status).toBe(403);

    const admin = webClient(server);
    await admin.signIn(server.adminToken);
    const queue = await admin.get('/web/review');
    expect(queue.text).toContain('re-review requested');
    expect(queue.text).toContain('please look');
    const adminCsrf = /name="csrf" value="([^"]+)"/.exec(queue.text)![1]!;
    const decided = await admin.post('/web/nodes/second/versions/1.0.0/decision', {
      csrf: adminCsrf,
      decision: 'ban',
      message: 'runs what the user types',
    });
    expect(decided.status).toBe(303);
    const anyone = await webClient(server).get('/nodes/second/versions/1.0.0');
    expect(anyone.text).toContain('Banned');
    expect(anyone.text).toContain('runs what the user types');
    expect(anyone.text).not.toContain('class="finding"');
  });
});
