// The audit log over HTTP (the [operate] issue): admin and owner actions are recorded with who did
// what to what, and `GET /admin/audit` (admins only) pages and filters them, newest first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditPage } from '../../src/contract/resources.js';
import { startServer, type TestServer } from '../helpers.js';
import { runInProcess } from '../cli/in-process.js';
import {
  addMember,
  client,
  createPublisher,
  createUser,
  expectError,
  publish,
  type TestUser,
} from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: TestUser;
let helper: TestUser;
const admin = () => ({ token: server.adminToken });

const audit = async (query = '') => {
  const reply = await api.get(`/admin/audit${query}`, admin());
  expect(reply.status, reply.text).toBe(200);
  return AuditPage.parse(reply.body);
};

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  owner = await createUser(server, 'olga');
  helper = await createUser(server, 'hugo');
  await createPublisher(server, owner, 'olga-pub');
  await addMember(server, owner, 'olga-pub', helper);
  expect((await publish(server, owner.token, 'olga-pub', 'olga-node', '1.0.0')).status).toBe(201);
  // the actions, by the owner and by the admin
  expect(
    (
      await api.put('/publishers/olga-pub/nodes/olga-node/versions/1.0.0', {
        token: owner.token,
        body: { status: 'NodeVersionStatusDeleted' },
      })
    ).status,
  ).toBe(200);
  expect((await api.delete(`/publishers/olga-pub/members/${helper.id}`, { token: owner.token })).status).toBe(204);
  expect(
    (await api.put('/publishers/olga-pub/nodes/olga-node', { ...admin(), body: { status: 'NodeStatusBanned' } }))
      .status,
  ).toBe(200);
  expect(
    (await api.put('/publishers/olga-pub', { ...admin(), body: { status: 'PublisherStatusBanned' } })).status,
  ).toBe(200);
  const tokens = (await api.get(`/users/${helper.id}/tokens`, admin())).body;
  expect((await api.delete(`/users/${helper.id}/tokens/${tokens[0].id}`, admin())).status).toBe(204);
  expect((await api.post(`/users/${owner.id}/disable`, admin())).status).toBe(200);
  expect((await api.post(`/users/${owner.id}/enable`, admin())).status).toBe(200);
  expect((await api.delete(`/users/${helper.id}?remove_memberships=true`, admin())).status).toBe(204);
});
afterAll(() => server.close());

describe('GET /admin/audit', () => {
  it('records each action with its actor, target and details, newest first', async () => {
    const { entries, total } = await audit('?limit=100');
    const adminId = (await api.get('/users/me', admin())).body.user.id;
    expect(entries.map((e) => [e.actor_id, e.action, e.target])).toEqual([
      [adminId, 'user.delete', `user:${helper.id}`],
      [adminId, 'user.enable', `user:${owner.id}`],
      [adminId, 'user.disable', `user:${owner.id}`],
      [adminId, 'token.revoke', `token:${(entries[3].target as string).slice('token:'.length)}`],
      [adminId, 'publisher.status', 'publisher:olga-pub'],
      [adminId, 'node.status', 'node:olga-node'],
      [owner.id, 'member.remove', 'publisher:olga-pub'],
      [owner.id, 'version.status', 'version:olga-node@1.0.0'],
      [owner.id, 'member.add', 'publisher:olga-pub'],
    ]);
    expect(total).toBe(entries.length);
    expect(entries.find((e) => e.action === 'version.status')?.details).toEqual({
      from: 'NodeVersionStatusPending',
      to: 'NodeVersionStatusDeleted',
    });
    expect(entries.find((e) => e.action === 'token.revoke')?.details).toMatchObject({ user: helper.id, kind: 'user' });
    expect(entries.find((e) => e.action === 'user.delete')?.details).toEqual({ memberships: 'removed' });
  });

  it('pages and filters by action and target', async () => {
    expect((await audit('?action=user.disable')).entries.map((e) => e.target)).toEqual([`user:${owner.id}`]);
    expect((await audit('?target=publisher:olga-pub')).total).toBe(3);
    const second = await audit('?limit=2&page=2');
    expect(second.entries.map((e) => e.action)).toEqual(['user.disable', 'token.revoke']);
  });

  it('is 403 for anyone but an admin, 400 for a bad limit', async () => {
    expectError(await api.get('/admin/audit', { token: owner.token }), 403, 'forbidden');
    expectError(await api.get('/admin/audit?limit=1000', admin()), 400, 'invalid_request');
  });

  it('is what `nodereg admin audit` shows, filtered and as JSON', async () => {
    const cli = (args: string[]) => runInProcess(['--registry', server.url, '--token', server.adminToken, ...args]);
    const shown = await cli(['admin', 'audit', '--limit', '3']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/WHEN\s+ACTOR\s+ACTION\s+TARGET/);
    expect(shown.stdout).toContain('user.delete');
    expect(shown.stdout).not.toContain('node.status');
    const json = JSON.parse((await cli(['admin', 'audit', '--action', 'node.status', '--json'])).stdout);
    expect(json).toEqual([
      expect.objectContaining({ action: 'node.status', details: { from: 'NodeStatusActive', to: 'NodeStatusBanned' } }),
    ]);
    const refused = await runInProcess(['--registry', server.url, '--token', owner.token, 'admin', 'audit']);
    expect(refused.code).toBe(4);
    expect((await cli(['admin', 'audit', '--limit', '0'])).code).toBe(2);
  });
});
