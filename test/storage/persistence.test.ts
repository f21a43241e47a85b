// What survives a restart, what never reaches the disk in plain text, and how the admin is bootstrapped.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TOKEN_PREFIX } from '../../src/contract/limits.js';
import { createRegistryServer } from '../../src/server/index.js';
import { startServer, tempDir } from '../helpers.js';
import {
  addMember,
  call,
  client,
  createPat,
  createPublisher,
  createUser,
  expectError,
  publish,
  publishAndUpload,
} from '../server/fixtures.js';

describe('persistence', () => {
  it('keeps users, tokens, publishers, members, nodes, versions and reviews across a restart on the same data dir', async () => {
    const first = await startServer();
    const alice = await createUser(first, 'alice');
    const bob = await createUser(first, 'bob');
    await createPublisher(first, alice, 'keep-co', { description: 'kept' });
    await addMember(first, alice, 'keep-co', bob);
    const pat = await createPat(first, alice, 'keep-co');
    expect(
      (
        await publish(first, pat, 'keep-co', 'Kept-Node', '1.0.0', {
          node: { name: 'Kept', tags: ['kept'] },
          node_version: { changelog: 'c' },
        })
      ).status,
    ).toBe(201);
    await call(first.url, 'POST', '/nodes/kept-node/reviews?star=4', { token: bob.token });
    const uploaded = await publishAndUpload(first, pat, 'keep-co', 'kept-node', '2.0.0');
    const archive = Buffer.from(await (await fetch(uploaded.downloadUrl)).arrayBuffer());
    // the download counts once the server has handed the whole archive over: let that land first
    await new Promise((resolve) => setTimeout(resolve, 100));
    const api1 = client(first);
    const before = {
      node: (await api1.get('/nodes/kept-node', { token: alice.token })).body,
      versions: (await api1.get('/nodes/kept-node/versions', { token: alice.token })).body,
      publisher: (await api1.get('/publishers/keep-co', { token: alice.token })).body,
      me: (await api1.get('/users/me', { token: bob.token })).body,
    };
    expect(before.node.downloads).toBe(1);
    await first.close();

    const second = await startServer({ dataDir: first.dataDir, adminToken: first.adminToken });
    const api2 = client(second);
    const withUrl = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(first.url, second.url));
    expect((await api2.get('/nodes/kept-node', { token: alice.token })).body).toEqual(withUrl(before.node));
    expect((await api2.get('/nodes/kept-node/versions', { token: alice.token })).body).toEqual(
      withUrl(before.versions),
    );
    expect((await api2.get('/publishers/keep-co', { token: alice.token })).body).toEqual(before.publisher);
    expect((await api2.get('/users/me', { token: bob.token })).body).toEqual(before.me);
    expect((await api2.get('/users/me', { token: pat })).body.kind).toBe('pat');
    expect((await api2.get('/nodes/search?q=kept')).body.total).toBe(1);
    // the archive too, under the new address
    const node = (await api2.get('/nodes/kept-node')).body;
    expect(node.latest_version.downloadUrl).toBe(`${second.url}/archives/keep-co/Kept-Node/2.0.0/node.zip`);
    expect(Buffer.from(await (await fetch(node.latest_version.downloadUrl)).arrayBuffer()).equals(archive)).toBe(true);
    // the retry rule still holds after the restart: same version, no archive yet → 201 again
    expect((await publish(second, pat, 'keep-co', 'kept-node', '1.0.0')).status).toBe(201);
    await second.close();
  });

  it('stores no token in plain text', async () => {
    const server = await startServer();
    const alice = await createUser(server, 'alice');
    await createPublisher(server, alice, 'secret-co');
    const pat = await createPat(server, alice, 'secret-co');
    const extra = (await call(server.url, 'POST', '/users/me/tokens', { token: alice.token, body: { name: 'x' } })).body
      .token as string;
    for (const token of [alice.token, pat, extra, server.adminToken])
      expect((await call(server.url, 'GET', '/users/me', { token })).status).toBe(200);
    await server.close();
    const files = readdirSync(server.dataDir).filter((name) => name.startsWith('registry.db'));
    expect(files).toContain('registry.db');
    const bytes = Buffer.concat(files.map((name) => readFileSync(join(server.dataDir, name))));
    for (const token of [alice.token, pat, extra, server.adminToken]) {
      expect(bytes.includes(token)).toBe(false);
      // not even the random part alone
      expect(bytes.includes(token.slice(12))).toBe(false);
    }
  });
});

describe('admin bootstrap', () => {
  it('generates an admin token into DIR/admin-token (0600) on first start, exposes it once, and reuses it', async () => {
    const dataDir = tempDir();
    const first = createRegistryServer({ dataDir, port: 0 });
    const url = await first.listen();
    const token = first.generatedAdminToken!;
    expect(token.startsWith(TOKEN_PREFIX.user)).toBe(true);
    const file = join(dataDir, 'admin-token');
    expect(readFileSync(file, 'utf8').trim()).toBe(token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const me = await call(url, 'GET', '/users/me', { token });
    expect(me.body).toMatchObject({ kind: 'user', user: { admin: true } });
    await first.close();

    const second = createRegistryServer({ dataDir, port: 0 });
    const url2 = await second.listen();
    expect(second.generatedAdminToken).toBeUndefined();
    expect((await call(url2, 'GET', '/users/me', { token })).status).toBe(200);
    await second.close();
  });

  it('uses the given admin token (NODEREG_ADMIN_TOKEN) without writing a file; a changed one replaces the old', async () => {
    const dataDir = tempDir();
    const first = createRegistryServer({ dataDir, port: 0, adminToken: 'nrg_u_given-admin-token-one' });
    const url = await first.listen();
    expect(first.generatedAdminToken).toBeUndefined();
    expect(existsSync(join(dataDir, 'admin-token'))).toBe(false);
    expect((await call(url, 'GET', '/users/me', { token: 'nrg_u_given-admin-token-one' })).body.user.admin).toBe(true);
    await first.close();

    const second = createRegistryServer({ dataDir, port: 0, adminToken: 'nrg_u_given-admin-token-two' });
    const url2 = await second.listen();
    expect((await call(url2, 'GET', '/users/me', { token: 'nrg_u_given-admin-token-two' })).body.user.admin).toBe(true);
    expectError(await call(url2, 'GET', '/users/me', { token: 'nrg_u_given-admin-token-one' }), 401, 'unauthorized');
    await second.close();
  });
});
