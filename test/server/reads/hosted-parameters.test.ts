// The parameters and reads the hosted registry's clients use (DESIGN.md §12): node_id and
// include_banned on the list, `search` on search, repeatable `statuses` on a version list, the bulk
// version lookup, and parameters we do not act on accepted and ignored, never a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../../helpers.js';
import { call, createPat, createPublisher, createUser, expectError, publishAndUpload } from '../fixtures.js';

describe('the hosted parameters', () => {
  let server: TestServer;
  const get = (path: string, token?: string) => call(server.url, 'GET', path, { token });
  beforeAll(async () => {
    server = await startServer();
    const owner = await createUser(server);
    await createPublisher(server, owner, 'hp');
    const pat = await createPat(server, owner, 'hp');
    for (const id of ['alpha', 'beta', 'gamma'])
      await publishAndUpload(server, pat, 'hp', id, '1.0.0', { node: { name: `${id} relight` } });
    await publishAndUpload(server, pat, 'hp', 'alpha', '1.1.0');
    await publishAndUpload(server, pat, 'hp', 'alpha', '1.2.0');
    await call(server.url, 'PUT', '/publishers/hp/nodes/alpha/versions/1.2.0', {
      token: server.adminToken,
      body: { status: 'NodeVersionStatusFlagged' },
    });
    await call(server.url, 'PUT', '/publishers/hp/nodes/gamma', {
      token: server.adminToken,
      body: { status: 'NodeStatusBanned' },
    });
  });
  afterAll(() => server.close());

  it('lists the nodes named by a repeated node_id, in that order; Banned ones only to an admin with include_banned', async () => {
    const named = await get('/nodes?node_id=beta&node_id=alpha&node_id=gamma&node_id=nope');
    expect(named.status, named.text).toBe(200);
    expect(named.body).toMatchObject({ total: 2, page: 1, limit: 20, totalPages: 1 });
    expect(named.body.nodes.map((n: { id: string }) => n.id)).toEqual(['beta', 'alpha']);
    expect((await get('/nodes?node_id=gamma&include_banned=true')).body.total).toBe(0);
    const admin = await get('/nodes?node_id=gamma&include_banned=true', server.adminToken);
    expect(admin.body.nodes.map((n: { id: string }) => n.id)).toEqual(['gamma']);
    expect((await get('/nodes?node_id=gamma', server.adminToken)).body.total).toBe(0);
  });

  it('accepts the parameters it does not act on, and unknown ones, without a 400', async () => {
    const walked = await get(
      '/nodes?page=1&limit=30&comfyui_version=v0.3.40&form_factor=git-linux&supported_os=linux&supported_accelerator=cuda&made_up=1',
    );
    expect(walked.status, walked.text).toBe(200);
    expect(walked.body).toMatchObject({ total: 2, limit: 30, totalPages: 1 });
    const searched = await get('/nodes/search?search=relight&include_banned=false&form_factor=desktop-win&whatever=x');
    expect(searched.status, searched.text).toBe(200);
    expect(searched.body.nodes.map((n: { id: string }) => n.id).sort()).toEqual(['alpha', 'beta']);
    expect((await get('/nodes/search?search=beta&q=alpha')).body.nodes.map((n: { id: string }) => n.id)).toEqual([
      'alpha',
    ]);
  });

  it('still refuses a bad value of a parameter it acts on', async () => {
    expectError(await get('/nodes?limit=0'), 400, 'invalid_request');
    expectError(await get('/nodes/alpha/versions?statuses=NodeVersionStatusNope'), 400, 'invalid_request');
  });

  it('filters a version list by repeated statuses', async () => {
    const both = await get('/nodes/alpha/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending');
    expect(both.body.map((v: { version: string }) => v.version)).toEqual(['1.1.0', '1.0.0']);
    const flagged = await get('/nodes/alpha/versions?statuses=NodeVersionStatusFlagged&include_status_reason=true');
    expect(flagged.body.map((v: { version: string }) => v.version)).toEqual(['1.2.0']);
    expect((await get('/nodes/alpha/versions')).body).toHaveLength(3);
  });

  it('looks versions up in bulk: one entry per item, in order', async () => {
    const asked = [
      { node_id: 'alpha', version: '1.1.0' },
      { node_id: 'alpha', version: '9.9.9' },
      { node_id: 'nope', version: '1.0.0' },
      { node_id: 'gamma', version: '1.0.0' },
      { node_id: 'beta', version: '1.0' },
    ];
    const reply = await call(server.url, 'POST', '/bulk/nodes/versions', { body: { node_versions: asked } });
    expect(reply.status, reply.text).toBe(200);
    const items = reply.body.node_versions;
    expect(items.map((i: { identifier: unknown }) => i.identifier)).toEqual(asked);
    expect(items.map((i: { status: string }) => i.status)).toEqual([
      'success',
      'not_found',
      'not_found',
      'error',
      'success',
    ]);
    expect(items[0].node_version).toMatchObject({ version: '1.1.0', node_id: 'alpha', supported_comfyui_version: '' });
    expect(items[3].error_message).toContain('banned');
    expect(items[4].node_version.version).toBe('1.0.0');
  });

  it('takes at most 1,000 items in a bulk lookup', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => ({ node_id: 'alpha', version: `1.0.${i}` }));
    expectError(
      await call(server.url, 'POST', '/bulk/nodes/versions', { body: { node_versions: many } }),
      400,
      'invalid_request',
    );
    const thousand = await call(server.url, 'POST', '/bulk/nodes/versions', {
      body: { node_versions: many.slice(0, 1000) },
    });
    expect(thousand.status).toBe(200);
    expect(thousand.body.node_versions).toHaveLength(1000);
  });
});
