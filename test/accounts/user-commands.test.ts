// `nodereg user list|disable|enable|delete` and `nodereg token list|revoke --user USER`, in process
// against a real server: an admin manages any account and its tokens; the refusals exit with their
// codes and say what to pass.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServer, type TestServer } from '../helpers.js';
import { addMember, call, createPat, createPublisher, createUser } from '../server/fixtures.js';

let server: TestServer;
const cli = (token: string, args: string[]) => runInProcess(['--registry', server.url, '--token', token, ...args]);

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe('nodereg user', () => {
  it('lists the users, every page or one, as a table or JSON', async () => {
    await createUser(server, 'paula');
    await createUser(server, 'quinn');
    const listed = await cli(server.adminToken, ['user', 'list', '--limit', '1']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/ID\s+NAME\s+E-MAIL\s+STATE/);
    for (const name of ['admin', 'paula', 'quinn']) expect(listed.stdout).toContain(name);
    const page = JSON.parse(
      (await cli(server.adminToken, ['user', 'list', '--json', '--page', '2', '--limit', '1'])).stdout,
    );
    expect(page.map((u: { name: string }) => u.name)).toEqual(['paula']);
    const bad = await cli(server.adminToken, ['user', 'list', '--limit', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit');
  });

  it('disables and enables a user named by e-mail; their token says the account is disabled', async () => {
    const rita = await createUser(server, 'rita');
    const off = await cli(server.adminToken, ['user', 'disable', 'rita@example.org']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain(`disabled user rita (${rita.id})`);
    const refused = await cli(rita.token, ['whoami']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('is disabled');
    expect((await cli(server.adminToken, ['user', 'enable', 'rita'])).code).toBe(0);
    expect((await cli(rita.token, ['whoami'])).code).toBe(0);
  });

  it('refuses a non-admin, and an unknown user, with their exit codes', async () => {
    const sam = await createUser(server, 'sam');
    const notAdmin = await cli(sam.token, ['user', 'disable', 'sam']);
    expect(notAdmin.code).toBe(4);
    expect(notAdmin.stderr).toContain('admin token');
    const unknown = await cli(server.adminToken, ['user', 'disable', 'nobody-at-all']);
    expect(unknown.code).toBe(5);
    expect(unknown.stderr).toContain('nodereg user list');
  });

  it('refuses to disable the last enabled admin, and says how to make another', async () => {
    const last = await cli(server.adminToken, ['user', 'disable', 'admin']);
    expect(last.code).toBe(3);
    expect(last.stderr).toContain('is the last enabled admin');
    expect(last.stderr).toContain('nodereg user create <name> --admin');
  });

  it('deletes a sole owner only with --transfer-to, which hands the publishers over', async () => {
    const tess = await createUser(server, 'tess');
    const uma = await createUser(server, 'uma');
    await createPublisher(server, tess, 'tess-pub');
    await createPublisher(server, uma, 'uma-pub');
    await addMember(server, uma, 'uma-pub', tess);
    const unsaid = await cli(server.adminToken, ['user', 'delete', 'tess']);
    expect(unsaid.code).toBe(3);
    expect(unsaid.stderr).toContain('--transfer-to');
    const sole = await cli(server.adminToken, ['user', 'delete', 'tess', '--remove-memberships']);
    expect(sole.code).toBe(3);
    expect(sole.stderr).toContain('only owner of tess-pub');
    const both = await cli(server.adminToken, [
      'user',
      'delete',
      'tess',
      '--remove-memberships',
      '--transfer-to',
      'uma',
    ]);
    expect(both.code).toBe(2);
    const moved = await cli(server.adminToken, ['user', 'delete', 'tess', '--transfer-to', 'uma@example.org']);
    expect(moved.code, moved.stderr).toBe(0);
    const me = await call(server.url, 'GET', '/users/me', { token: uma.token });
    expect(me.body.publishers).toEqual(
      expect.arrayContaining([
        { id: 'tess-pub', role: 'owner' },
        { id: 'uma-pub', role: 'owner' },
      ]),
    );
    expect((await cli(tess.token, ['whoami'])).code).toBe(4);
  });
});

describe('nodereg token --user USER', () => {
  it("lists and revokes another user's tokens for an admin; the revoked one stops working", async () => {
    const vera = await createUser(server, 'vera');
    await createPublisher(server, vera, 'vera-pub');
    const pat = await createPat(server, vera, 'vera-pub', 'deploy');
    const listed = await cli(server.adminToken, ['token', 'list', '--user', 'vera', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const listedTokens = JSON.parse(listed.stdout).map((t: { name: string; kind: string }) => [t.name, t.kind]);
    expect(listedTokens.sort()).toEqual([
      ['deploy', 'pat'],
      ['token', 'user'],
    ]);
    const table = await cli(server.adminToken, ['token', 'list', '--user', 'vera']);
    expect(table.stdout).toMatch(/PUBLISHER[\s\S]*vera-pub/);
    const revoked = await cli(server.adminToken, ['token', 'revoke', 'deploy', '--user', 'vera']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await call(server.url, 'GET', '/users/me', { token: pat })).status).toBe(401);
    expect((await cli(vera.token, ['token', 'list', '--user', 'vera'])).code).toBe(4);
    // without a value, --user is still one's own tokens
    const own = await cli(vera.token, ['token', 'list', '--user', '--json']);
    expect(JSON.parse(own.stdout).map((t: { name: string }) => t.name)).toEqual(['token']);
  });
});
