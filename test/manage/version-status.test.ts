// Status wins over upload: a version an admin Banned or Flagged, or a member Deleted, before its
// archive arrived never becomes Pending or Active by an upload to its still-valid signed URL, nor by
// publishing it again (issue 11, reproduced: Banned 3.0.0 became Active by a PUT).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import {
  client,
  createPublisher,
  createUser,
  expectError,
  makeZip,
  publish,
  uploadTo,
  type TestUser,
} from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: TestUser;

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  owner = await createUser(server, 'status-owner');
  await createPublisher(server, owner, 'status-pub');
});
afterAll(() => server.close());

const setStatus = (node: string, version: string, status: string, token = server.adminToken) =>
  api.put(`/publishers/status-pub/nodes/${node}/versions/${version}`, { token, body: { status } });

describe.each([
  ['NodeVersionStatusBanned', 403, 'banned', (server: TestServer) => server.adminToken],
  ['NodeVersionStatusFlagged', 409, 'conflict', (server: TestServer) => server.adminToken],
  ['NodeVersionStatusDeleted', 409, 'conflict', () => owner.token],
] as const)('a version set to %s before its archive arrived', (status, code, error, setter) => {
  const node = `held-${status.slice(17).toLowerCase()}`;

  it('refuses the upload to its signed URL, and stays as it was set', async () => {
    const published = await publish(server, owner.token, 'status-pub', node, '3.0.0');
    expect(published.status, published.text).toBe(201);
    expect((await setStatus(node, '3.0.0', status, setter(server))).status).toBe(200);

    const uploaded = await uploadTo(published.body.signedUrl, await makeZip());
    expectError(uploaded, code, error);
    expect(uploaded.body.message).toContain('3.0.0');
    const version = await api.get(`/nodes/${node}/versions/3.0.0`, { token: server.adminToken });
    expect(version.body.status).toBe(status);
    expect(version.body.downloadUrl).toBeUndefined();
    expectError(await api.get(`/nodes/${node}/install?version=3.0.0`), 404, 'not_found');
    expectError(
      await api.get(`/archives/status-pub/${node}/3.0.0/node.zip`, { token: server.adminToken }),
      404,
      'not_found',
    );
  });

  it('is not reset to Pending by publishing it again, nor made Active by the fresh URL', async () => {
    const again = await publish(server, owner.token, 'status-pub', node, '3.0.0');
    expectError(again, code, error);
    expect(again.body.message).toContain(status.slice(17).toLowerCase());
    const version = await api.get(`/nodes/${node}/versions/3.0.0`, { token: server.adminToken });
    expect(version.body.status).toBe(status);
    // another version of the same node publishes and uploads as usual
    const next = await publish(server, owner.token, 'status-pub', node, '3.0.1');
    expect(next.status, next.text).toBe(201);
    expect((await uploadTo(next.body.signedUrl, await makeZip())).body.status).toBe('NodeVersionStatusActive');
  });
});
