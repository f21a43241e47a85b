// The registry commands as a publisher uses them: the CLI in-process with a temp HOME, against a real
// registry on 127.0.0.1 (port 0, temp data dir, real SQLite). Each flow checks the server's state
// afterwards with fetch, and the documented exit codes.
import { fieldKey } from '../../src/shared/field-keys.js';
import { NODE_WRITABLE_FIELDS, NodeWritable, nodeFieldType } from '../../src/contract/resources.js';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands/index.js';
import { startServer, tempDir, type CliOptions, type TestServer } from '../helpers.js';
import { closedPort, runInProcess } from '../cli/in-process.js';
import { runHints } from '../cli/hints.js';

let server: TestServer;
let url: string;
let admin: string;
let alice: { id: string; token: string };
let bob: { id: string; token: string };

/** The CLI, in this process, against the test registry with `token` (none when undefined). */
function cli(token: string | undefined, args: string[], options: CliOptions = {}) {
  return runInProcess(['--registry', url, ...(token ? ['--token', token] : []), ...args], options);
}

/** Options of a hinted command run by the user of `token`, against the test registry. */
const as = (token: string) => ({ env: { NODEREG_REGISTRY: url, NODEREG_TOKEN: token } });

async function api(path: string, token?: string, init: RequestInit = {}) {
  const response = await fetch(url + path, {
    ...init,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      ...init.headers,
    },
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A small valid zip, built in memory. */
function zipOf(files: Record<string, string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files))
    zip.addBuffer(Buffer.from(content), name, { mtime: new Date(0) });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });
}

/** Publishes a version through the API (publish, then upload to the signed URL): a fixture, not under test here. */
async function publish(token: string, publisher: string, nodeId: string, version: string) {
  const published = await api(`/publishers/${publisher}/nodes/${nodeId}/versions`, token, {
    method: 'POST',
    body: JSON.stringify({
      node: { id: nodeId, name: `Node ${nodeId}`, description: 'relights images' },
      node_version: { version },
    }),
  });
  expect(published.status).toBe(201);
  const archive = await zipOf({
    'pyproject.toml': `[project]\nname = "${nodeId}"\nversion = "${version}"\n`,
    '__init__.py': `VERSION = "${version}"\n`,
  });
  const upload = await fetch(published.body.signedUrl, {
    method: 'PUT',
    body: archive,
    headers: {
      'content-type': 'application/zip',
      'x-content-sha256': createHash('sha256').update(archive).digest('hex'),
    },
  });
  expect(upload.status).toBe(200);
  return archive;
}

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  admin = server.adminToken;
  // bob through the API; alice through the CLI in the first test
  const created = await api('/users', admin, { method: 'POST', body: JSON.stringify({ name: 'bob' }) });
  bob = { id: created.body.user.id, token: created.body.token };
});
afterAll(() => server.close());

describe('accounts: user create, whoami', () => {
  it('an admin creates a user: the token alone on stdout, the hint on stderr', async () => {
    const result = await cli(admin, ['user', 'create', 'alice', '--email', 'alice@example.com']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^nrg_u_\S+\n$/);
    expect(result.stderr).toContain('shown only this once');
    const token = result.stdout.trim();
    const me = await api('/users/me', token);
    expect(me.body).toMatchObject({ kind: 'user', user: { name: 'alice', email: 'alice@example.com' } });
    alice = { id: me.body.user.id, token };
  });

  it('a user who is not an admin cannot create users (4); --json gives the created user (here an admin) and token', async () => {
    const refused = await cli(bob.token, ['user', 'create', 'carol']);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('admin');
    const json = await cli(admin, ['--json', 'user', 'create', 'dave', '--admin']);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body).toMatchObject({ user: { name: 'dave', admin: true }, token: expect.stringMatching(/^nrg_u_/) });
    expect((await api('/users/me', body.token)).body.user).toMatchObject({ id: body.user.id, admin: true });
  });

  it('whoami shows the user (human and --json); a revoked-or-unknown token exits 4', async () => {
    const human = await cli(alice.token, ['whoami']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`alice (${alice.id}, alice@example.com)`);
    expect(human.stdout).toContain(`registry: ${url}`);
    const json = await cli(alice.token, ['whoami', '--json']);
    expect(JSON.parse(json.stdout)).toEqual((await api('/users/me', alice.token)).body);
    const unknown = await cli('nrg_u_doesnotexist', ['whoami']);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('nodereg login');
  });
});

describe('publisher create, show, update, members', () => {
  it('creates a publisher (the caller becomes owner); the same id again exits 3', async () => {
    const created = await cli(alice.token, [
      'publisher',
      'create',
      'acme',
      '--name',
      'Acme Nodes',
      '--website',
      'https://acme.example',
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('created publisher acme (Acme Nodes)');
    const found = await api('/publishers/acme');
    expect(found.body).toMatchObject({ id: 'acme', name: 'Acme Nodes', website: 'https://acme.example' });
    expect(found.body.members).toEqual([
      expect.objectContaining({ role: 'owner', user: expect.objectContaining({ id: alice.id }) }),
    ]);
    const again = await cli(bob.token, ['publisher', 'create', 'acme', '--name', 'Other']);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('nodereg publisher show acme');
    const [shown] = await runHints(again.stderr, as(bob.token));
    expect(shown.result.code, shown.result.stderr).toBe(0);
    expect(shown.result.stdout).toContain('Acme Nodes (acme)');
  });

  it('shows a publisher with its members; --json is the server body; an unknown one exits 5 with a hint', async () => {
    const human = await cli(undefined, ['publisher', 'show', 'acme']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Acme Nodes (acme)');
    expect(human.stdout).toMatch(/USER\s+NAME\s+EMAIL\s+ROLE/);
    expect(human.stdout).toMatch(new RegExp(`${alice.id}\\s+alice\\s+owner`)); // emails are for members' eyes only
    const json = await cli(undefined, ['--json', 'publisher', 'show', 'acme']);
    expect(JSON.parse(json.stdout)).toEqual((await api('/publishers/acme')).body);
    const missing = await cli(undefined, ['publisher', 'show', 'nobody']);
    expect(missing.code).toBe(5);
    // the hint runs as printed: it creates the publisher
    const [create] = await runHints(missing.stderr, as(bob.token));
    expect(create.argv).toEqual(['publisher', 'create', 'nobody', '--registry', url]);
    expect(create.result.code).toBe(0);
    expect((await api('/publishers/nobody')).status).toBe(200);
  });

  it('updates only the fields given; an empty value clears one; a non-owner exits 4', async () => {
    const updated = await cli(alice.token, [
      'publisher',
      'update',
      'acme',
      '--description',
      'Image nodes',
      '--website',
      '',
      '--json',
    ]);
    expect(updated.code).toBe(0);
    const after = (await api('/publishers/acme')).body;
    expect(JSON.parse(updated.stdout)).toEqual((await api('/publishers/acme', alice.token)).body);
    expect(after).toMatchObject({ name: 'Acme Nodes', description: 'Image nodes' });
    expect(after.website).toBe('');
    const refused = await cli(bob.token, ['publisher', 'update', 'acme', '--name', 'Taken over']);
    expect(refused.code).toBe(4);
    expect((await api('/publishers/acme')).body.name).toBe('Acme Nodes');
  });

  it('invites a member by user name, who lists and accepts the invitation; removes members; removing the last owner exits 3', async () => {
    const added = await cli(alice.token, ['publisher', 'members', 'add', 'acme', 'bob']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`invited bob (${bob.id}) to acme as member`);
    expect(added.stderr).toContain('nodereg publisher accept acme');
    expect((await api('/publishers/acme')).body.members).toHaveLength(1);

    const listed = await cli(bob.token, ['publisher', 'invitations']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/acme\s+Acme Nodes\s+member\s+alice/);
    const json = await cli(bob.token, ['publisher', 'invitations', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject([{ publisher: { id: 'acme' }, role: 'member', status: 'pending' }]);
    // the invitation's hint is the invitee's command, run as printed
    const [{ argv, result: accepted }] = await runHints(added.stderr, as(bob.token));
    expect(argv).toEqual(['publisher', 'accept', 'acme', '--registry', url]); // the --registry typed is kept
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain('you are now a member of acme');
    expect((await api('/publishers/acme')).body.members).toHaveLength(2);
    const again = await cli(bob.token, ['publisher', 'accept', 'acme']);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain('nodereg publisher invitations');
    const [invitations] = await runHints(again.stderr, as(bob.token));
    expect(invitations.result.code, invitations.result.stderr).toBe(0);
    const byId = await cli(alice.token, ['publisher', 'members', 'add', 'acme', bob.id, '--role', 'member', '--json']);
    expect(JSON.parse(byId.stdout)).toMatchObject({ role: 'member', status: 'member', user: { id: bob.id } });
    const lastOwner = await cli(alice.token, ['publisher', 'members', 'remove', 'acme', alice.id]);
    expect(lastOwner.code).toBe(3);
    expect(lastOwner.stderr).toContain('at least one owner');
    const byMember = await cli(bob.token, ['publisher', 'members', 'remove', 'acme', alice.id]);
    expect(byMember.code).toBe(4);
    const removed = await cli(alice.token, ['publisher', 'members', 'remove', 'acme', bob.id]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`removed ${bob.id} from acme`);
    expect((await api('/publishers/acme')).body.members.map((m: { user: { id: string } }) => m.user.id)).toEqual([
      alice.id,
    ]);
  });
});

describe('tokens', () => {
  it('creates a publisher token (stdout: the token alone), lists it, revokes it', async () => {
    const created = await cli(alice.token, ['token', 'create', '--publisher', 'acme', '--name', 'ci']);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^nrg_pat_\S+\n$/);
    expect(created.stderr).toContain('NODEREG_TOKEN');
    const pat = created.stdout.trim();
    const me = (await api('/users/me', pat)).body;
    expect(me).toMatchObject({ kind: 'pat', publisher: { id: 'acme' }, token: { name: 'ci' } });

    const list = await cli(alice.token, ['token', 'list', '--publisher', 'acme']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/ID\s+PREFIX\s+NAME\s+CREATED\s+LAST USED/);
    expect(list.stdout).toContain(`${pat.slice(0, 12)}…`);
    expect(list.stdout).toMatch(/ci\s+(now|\d+ seconds? ago)\s+(now|\d+ seconds? ago)/); // used by the /users/me above
    expect(list.stdout).not.toContain(pat);
    const json = await cli(alice.token, ['--json', 'token', 'list', '--publisher', 'acme']);
    expect(JSON.parse(json.stdout)).toEqual((await api('/publishers/acme/tokens', alice.token)).body);

    const whoami = await cli(pat, ['whoami']);
    expect(whoami.stdout).toContain(`access token "ci" (${me.token.id}) of publisher acme, created by alice`);
    // what a publisher's token may not do says which token to use instead, not "check it belongs to this publisher"
    const createdWithPat = await cli(pat, ['publisher', 'create', 'pat-made']);
    expect(createdWithPat.code).toBe(4);
    expect(createdWithPat.stderr).toContain('a personal access token may not');
    expect(createdWithPat.stderr).toContain('hint: a user token starts with nrg_u_');
    expect(createdWithPat.stderr).not.toContain('belongs to this publisher');

    const notOwner = await cli(bob.token, ['token', 'list', '--publisher', 'acme']);
    expect(notOwner.code).toBe(4);
    const revoked = await cli(alice.token, ['token', 'revoke', me.token.id, '--publisher', 'acme']);
    expect(revoked.code).toBe(0);
    expect((await api('/users/me', pat)).status).toBe(401);
    const again = await cli(alice.token, ['token', 'revoke', me.token.id, '--publisher', 'acme']);
    expect(again.code).toBe(5);
  });

  it('creates, lists and revokes a user token of your own', async () => {
    const created = await cli(alice.token, ['--json', 'token', 'create', '--user', '--name', 'laptop']);
    expect(created.code).toBe(0);
    const body = JSON.parse(created.stdout);
    expect(body).toMatchObject({ name: 'laptop', token: expect.stringMatching(/^nrg_u_/) });
    expect(created.stderr).toBe('');
    const list = await cli(alice.token, ['token', 'list']);
    expect(list.stdout).toContain('laptop');
    expect(list.stdout).toMatch(/laptop\s+\S.*never/);
    const revoked = await cli(alice.token, ['token', 'revoke', body.id]);
    expect(revoked.code).toBe(0);
    expect((await api('/users/me', body.token)).status).toBe(401);
  });
  it('revokes by the token itself, found among the listed tokens by its prefix: never echoed, never sent in a URL', async () => {
    const created = JSON.parse(
      (await cli(alice.token, ['--json', 'token', 'create', '--user', '--name', 'pasted'])).stdout,
    );
    const result = await cli(alice.token, ['token', 'revoke', created.token]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`revoked token pasted (${created.token.slice(0, 12)}…, ${created.id})`);
    expect(result.stdout + result.stderr).not.toContain(created.token);
    expect((await api('/users/me', created.token)).status).toBe(401);
  });
});

describe('nodes: show, versions, search, update, download', () => {
  const versions = ['0.9.0', '1.0.0', '1.1.0-beta.1', '1.2.0', '2.0.0-rc.1', '2.0.0'];
  let archives: Record<string, Buffer>;
  beforeAll(async () => {
    archives = {};
    for (const v of versions) archives[v] = await publish(alice.token, 'acme', 'my-node', v);
    await api('/publishers', bob.token, { method: 'POST', body: JSON.stringify({ id: 'bobco', name: 'Bob Co' }) });
  });

  it('shows a node with its latest version and every version; --json holds both server bodies', async () => {
    const human = await cli(undefined, ['node', 'show', 'my-node']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Node my-node (my-node)  active');
    expect(human.stdout).toMatch(/latest:\s+2\.0\.0/);
    expect(human.stdout).toMatch(/publisher:\s+acme/);
    expect(human.stdout).toMatch(/VERSION\s+STATUS\s+DEPRECATED\s+CREATED\s+REASON/);
    for (const v of versions)
      expect(human.stdout).toMatch(new RegExp(`^${v.replace(/\./g, '\\.')}\\s+active\\s+-`, 'm'));
    const json = JSON.parse((await cli(undefined, ['--json', 'node', 'show', 'my-node'])).stdout);
    expect(json).toEqual({
      node: (await api('/nodes/my-node')).body,
      versions: (await api('/nodes/my-node/versions')).body,
    });
    const missing = await cli(undefined, ['node', 'show', 'ghost']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('nodereg node search ghost');
  });

  it('lists versions newest first and searches nodes (--json equals the server body)', async () => {
    const list = await cli(undefined, ['node', 'versions', 'my-node']);
    const order = list.stdout
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => l.split(/\s+/)[0]);
    expect(order).toEqual([...versions].reverse());
    const json = await cli(undefined, ['node', 'versions', 'my-node', '--json']);
    expect(JSON.parse(json.stdout)).toEqual((await api('/nodes/my-node/versions')).body);

    const search = await cli(undefined, ['node', 'search', 'relights']);
    expect(search.code).toBe(0);
    expect(search.stdout).toMatch(/my-node\s+Node my-node\s+2\.0\.0/);
    expect(search.stdout).toContain('page 1 of 1 · 1 node');
    const searchJson = await cli(undefined, ['--json', 'node', 'search', 'relights', '--limit', '5']);
    expect(JSON.parse(searchJson.stdout)).toEqual((await api('/nodes/search?q=relights&limit=5')).body);
    const none = await cli(undefined, ['node', 'search', 'zzzznothing']);
    expect(none.stdout).toContain('no nodes match "zzzznothing"');
  });

  it('shows what a publisher wrote without letting its control characters drive the terminal (clear, retitle, hide, overwrite)', async () => {
    await publish(bob.token, 'bobco', 'loud-node', '1.0.0');
    const hostile = {
      name: 'Loud\x1b[8m',
      description: 'clears \x1b[2J\x1b]0;title\x07 then\rover\r\nwritten on Windows',
    };
    expect(
      (await api('/publishers/bobco/nodes/loud-node', bob.token, { method: 'PUT', body: JSON.stringify(hostile) }))
        .status,
    ).toBe(200);
    for (const args of [
      ['node', 'show', 'loud-node'],
      ['node', 'search', 'loud'],
    ]) {
      const shown = await cli(undefined, args, { env: { FORCE_COLOR: '1', NO_COLOR: undefined } });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain('Loud\\x1b[8m');
      if (args[1] === 'show') expect(shown.stdout).toContain('\x1b[32mactive\x1b[39m'); // our own colours stay
      if (args[1] === 'show') expect(shown.stdout).toMatch(/then\\x0dover\r\n +written on Windows/); // a line end stays (the next line indented under the first)
      expect(shown.stdout.replace(/\x1b\[(?:1|22|32|39)m/g, '').replace(/\r\n/g, '\n')).not.toMatch(
        /[\x00-\x08\x0b-\x1f\x7f-\x9f]/,
      );
    }
  });

  it('indents a multi-line description under its label in node show and publisher show, so its lines do not read as fields', async () => {
    await publish(bob.token, 'bobco', 'wordy-node', '1.0.0');
    const description = 'Relights images.\nlicense: not a field\r\nthird line';
    expect(
      (
        await api('/publishers/bobco/nodes/wordy-node', bob.token, {
          method: 'PUT',
          body: JSON.stringify({ description }),
        })
      ).status,
    ).toBe(200);
    expect(
      (await api('/publishers/bobco', bob.token, { method: 'PUT', body: JSON.stringify({ description }) })).status,
    ).toBe(200);
    for (const args of [
      ['node', 'show', 'wordy-node'],
      ['publisher', 'show', 'bobco'],
    ]) {
      const shown = await cli(undefined, args);
      expect(shown.code, shown.stderr).toBe(0);
      const [, label, first] = /^(description:\s+)(.*)$/m.exec(shown.stdout)!;
      expect(first).toBe('Relights images.');
      const pad = ' '.repeat(label.length);
      expect(shown.stdout).toContain(`${label}Relights images.\n${pad}license: not a field\r\n${pad}third line\n`);
    }
  });

  it('updates only the fields given, finding the publisher itself; an empty value clears a field', async () => {
    const before = (await api('/nodes/my-node')).body;
    const result = await cli(alice.token, [
      'node',
      'update',
      'my-node',
      '--description',
      'Relights portraits',
      '--tags',
      'image, relight',
      '--requires-app',
      '>=1.0',
      '--supported-os',
      'linux,macos',
      '--icon',
      'https://acme.example/icon.png',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('updated node my-node of acme');
    const after = (await api('/nodes/my-node')).body;
    expect(after).toMatchObject({
      name: before.name,
      description: 'Relights portraits',
      tags: ['image', 'relight'],
      supported_appui_version: '>=1.0',
      supported_os: ['linux', 'macos'],
      icon: 'https://acme.example/icon.png',
    });
    const cleared = await cli(alice.token, ['--json', 'node', 'update', 'my-node', '--icon', '']);
    expect(cleared.code).toBe(0);
    const final = (await api('/nodes/my-node')).body;
    expect(final.icon).toBe('');
    expect(final.description).toBe('Relights portraits');
    expect(JSON.parse(cleared.stdout)).toMatchObject({ id: 'my-node', description: 'Relights portraits' });
  });

  it('has a flag for every node field of the contract a member writes (lists comma-separated), each setting its field', async () => {
    const before = (await api('/nodes/my-node')).body;
    const args: string[] = [];
    const restore: string[] = [];
    const expected: Record<string, unknown> = {};
    for (const field of NODE_WRITABLE_FIELDS) {
      const kind = nodeFieldType(field);
      if (kind === 'record') continue; // an object has no flag
      // free text, else the first example its rule takes (a URL, a version range)
      const text = [`${field} value`, `https://example.com/${field}`, '>=1.0.0'].find(
        (v) => NodeWritable.shape[field].safeParse(v).success,
      );
      args.push(`--${fieldKey(field)}`, kind === 'array' ? `${field}-a,${field}-b` : text!);
      expected[field] = kind === 'array' ? [`${field}-a`, `${field}-b`] : text;
      const old = before[field];
      restore.push(`--${fieldKey(field)}`, old === undefined ? '' : Array.isArray(old) ? old.join(',') : String(old));
    }
    expect(Object.keys(expected)).toContain('preempted_app_node_names');
    const result = await cli(alice.token, ['node', 'update', 'my-node', ...args]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect((await api('/nodes/my-node')).body).toMatchObject(expected);
    expect((await cli(alice.token, ['node', 'update', 'my-node', ...restore])).code).toBe(0); // as the later flows expect it
    expect((await api('/nodes/my-node')).body).toEqual({ ...before, latest_version: expect.anything() });
  });

  it('node update: admin-only status 4, other publisher 4, unknown node 5 (naming the publisher from ./pyproject.toml)', async () => {
    const banned = await cli(alice.token, ['node', 'update', 'my-node', '--status', 'banned']);
    expect(banned.code).toBe(4);
    expect((await api('/nodes/my-node')).body.status).toBe('NodeStatusActive');
    const stranger = await cli(bob.token, ['node', 'update', 'my-node', '--name', 'Mine now']);
    expect(stranger.code).toBe(4);
    const wrongPublisher = await cli(bob.token, [
      'node',
      'update',
      'my-node',
      '--publisher',
      'bobco',
      '--name',
      'Mine now',
    ]);
    expect([4, 5]).toContain(wrongPublisher.code);
    expect((await api('/nodes/my-node')).body.name).toBe('Node my-node');

    const project = tempDir('nodereg-project-');
    writeFileSync(join(project, 'pyproject.toml'), '[project]\nname = "ghost"\n\n[tool.nodereg]\npublisher = "acme"\n');
    const ghost = await cli(alice.token, ['node', 'update', 'ghost', '--name', 'Ghost'], { cwd: project });
    expect(ghost.code).toBe(5);
    expect(ghost.stderr).toContain('publisher acme');
    const noManifest = await cli(alice.token, ['node', 'update', 'ghost', '--name', 'Ghost']);
    expect(noManifest.code).toBe(5);
    expect(noManifest.stderr).toContain('nodereg node search ghost');
  });

  it('downloads the latest or a given version, checks it and counts the download', async () => {
    const dir = tempDir('nodereg-dl-');
    const downloadsBefore = (await api('/nodes/my-node')).body.downloads ?? 0;
    const latest = await cli(undefined, ['node', 'download', 'my-node'], { cwd: dir });
    expect(latest.code).toBe(0);
    expect(latest.stdout).toMatch(
      /downloaded my-node 2\.0\.0 to my-node-2\.0\.0\.zip \(.+, 2 entries, sha256 [0-9a-f]{12}… verified\)/,
    );
    expect(readFileSync(join(dir, 'my-node-2.0.0.zip')).equals(archives['2.0.0'])).toBe(true);

    const out = join(dir, 'sub.zip');
    const given = await cli(undefined, ['--json', 'node', 'download', 'my-node@1.1.0-beta.1', '--out', out]);
    expect(given.code).toBe(0);
    const summary = JSON.parse(given.stdout);
    const sha = createHash('sha256').update(archives['1.1.0-beta.1']).digest('hex');
    expect(summary).toEqual({
      node_id: 'my-node',
      version: '1.1.0-beta.1',
      file: out,
      size: archives['1.1.0-beta.1'].length,
      archive_sha256: sha,
      entries: 2,
      download_url: expect.stringContaining('/archives/acme/my-node/1.1.0-beta.1/node.zip'),
    });
    expect(readFileSync(out).equals(archives['1.1.0-beta.1'])).toBe(true);
    expect((await api('/nodes/my-node')).body.downloads).toBe(downloadsBefore + 2);

    const missing = await cli(undefined, ['node', 'download', 'my-node@9.9.9']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('nodereg node versions my-node');
    expect(readdirSync(dir).sort()).toEqual(['my-node-2.0.0.zip', 'sub.zip']);
  });

  it('refuses an archive whose SHA-256 differs from the announced one and leaves no file', async () => {
    const stored = findFile(join(server.dataDir, 'archives'), (p) => p.includes('1.0.0') && p.endsWith('.zip'));
    expect(stored).toBeDefined();
    const original = readFileSync(stored!);
    const tampered = Buffer.from(original);
    tampered[tampered.length - 30] ^= 0xff;
    writeFileSync(stored!, tampered);
    try {
      const dir = tempDir('nodereg-dl-');
      const result = await cli(undefined, ['node', 'download', 'my-node@1.0.0', '--out', join(dir, 'a.zip')]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('SHA-256');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      writeFileSync(stored!, original);
    }
  });
});

describe('versions: update and deprecate (ranges, prereleases)', () => {
  it('updates a changelog from a flag and from stdin, and deprecates one version', async () => {
    const flag = await cli(alice.token, ['version', 'update', 'my-node', '1.0.0', '--changelog', 'Fixed the preview']);
    expect(flag.code).toBe(0);
    expect((await api('/nodes/my-node/versions/1.0.0')).body.changelog).toBe('Fixed the preview');
    const piped = await cli(
      alice.token,
      ['--json', 'version', 'update', 'my-node', 'v1.2.0', '--changelog-file', '-', '--deprecate'],
      {
        input: '## 1.2.0\n- faster\n',
      },
    );
    expect(piped.code).toBe(0);
    const v120 = (await api('/nodes/my-node/versions/1.2.0')).body;
    expect(v120).toMatchObject({ changelog: '## 1.2.0\n- faster\n', deprecated: true });
    // the member's answer also carries the scan's findings (none here), which an anonymous read does not
    expect(JSON.parse(piped.stdout)).toEqual({ ...v120, findings: [] });
    const undone = await cli(alice.token, ['version', 'update', 'my-node', '1.2.0', '--undeprecate']);
    expect(undone.code).toBe(0);
    expect((await api('/nodes/my-node/versions/1.2.0')).body.deprecated).toBe(false);
  });

  it('status is admin-only (4 for a publisher); an admin approves with a reason', async () => {
    const refused = await cli(alice.token, [
      'version',
      'update',
      'my-node',
      '0.9.0',
      '--status',
      'flagged',
      '--reason',
      'looks odd',
    ]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('admin');
    const flagged = await cli(admin, [
      'version',
      'update',
      'my-node',
      '0.9.0',
      '--status',
      'flagged',
      '--reason',
      'looks odd',
    ]);
    expect(flagged.code).toBe(0);
    expect((await api('/nodes/my-node/versions/0.9.0')).body).toMatchObject({
      status: 'NodeVersionStatusFlagged',
      status_reason: 'looks odd',
    });
    const shown = await cli(undefined, ['node', 'versions', 'my-node']);
    expect(shown.stdout).toMatch(/^0\.9\.0\s+flagged\s+-\s+.+looks odd$/m);
    const back = await cli(admin, [
      'version',
      'update',
      'my-node',
      '0.9.0',
      '--status',
      'active',
      '--reason',
      'reviewed',
    ]);
    expect(back.code).toBe(0);
    expect((await api('/nodes/my-node/versions/0.9.0')).body.status).toBe('NodeVersionStatusActive');
    const missing = await cli(alice.token, ['version', 'update', 'my-node', '9.9.9', '--changelog', 'x']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('nodereg node versions my-node');
  });

  it('deprecates every version in "<2.0.0" (prereleases included) and undoes "1.x"', async () => {
    const deprecated = async () =>
      ((await api('/nodes/my-node/versions')).body as { version: string; deprecated?: boolean }[])
        .filter((v) => v.deprecated)
        .map((v) => v.version)
        .sort();
    const range = await cli(alice.token, ['version', 'deprecate', 'my-node', '<2.0.0']);
    expect(range.code).toBe(0);
    expect(range.stdout).toContain('deprecated 5 versions of my-node');
    for (const v of ['0.9.0', '1.0.0', '1.1.0-beta.1', '1.2.0', '2.0.0-rc.1'])
      expect(range.stdout).toContain(`  ${v}\n`);
    expect(await deprecated()).toEqual(['0.9.0', '1.0.0', '1.1.0-beta.1', '1.2.0', '2.0.0-rc.1']);

    // versions deprecated already are reported as such, not as deprecated now
    const again = await cli(alice.token, ['version', 'deprecate', 'my-node', '<1.1.0']);
    expect(again.code).toBe(0);
    // prereleases included: 1.1.0-beta.1 is below 1.1.0
    expect(again.stdout).toBe('already deprecated, left as they were:\n  1.1.0-beta.1\n  1.0.0\n  0.9.0\n');
    const againJson = JSON.parse(
      (await cli(alice.token, ['--json', 'version', 'deprecate', 'my-node', '1.0.0'])).stdout,
    );
    expect(againJson).toMatchObject({ versions: [], unchanged: ['1.0.0'] });

    const undo = await cli(alice.token, ['--json', 'version', 'deprecate', 'my-node', '1.x', '--undo']);
    expect(undo.code).toBe(0);
    const body = JSON.parse(undo.stdout);
    expect(body).toMatchObject({ node_id: 'my-node', publisher_id: 'acme', target: '1.x', deprecated: false });
    expect(body.versions.map((v: { version: string }) => v.version).sort()).toEqual(['1.0.0', '1.1.0-beta.1', '1.2.0']);
    expect(body.versions.every((v: { deprecated: boolean }) => v.deprecated === false)).toBe(true);
    expect(await deprecated()).toEqual(['0.9.0', '2.0.0-rc.1']);
    // the latest version is the highest active, non-deprecated, non-prerelease one
    expect((await api('/nodes/my-node')).body.latest_version.version).toBe('2.0.0');

    const none = await cli(alice.token, ['version', 'deprecate', 'my-node', '3.x']);
    expect(none.code).toBe(5);
    expect(none.stderr).toContain('no version of my-node matches 3.x');
    const stranger = await cli(bob.token, ['version', 'deprecate', 'my-node', '2.0.0']);
    expect(stranger.code).toBe(4);
    expect(await deprecated()).toEqual(['0.9.0', '2.0.0-rc.1']);
  });
});

describe('review', () => {
  it('rates a node; a second review replaces the first; an unknown node is 5, no token 4', async () => {
    const created = await api('/users', admin, { method: 'POST', body: JSON.stringify({ name: 'carol-reviews' }) });
    const carol = { token: created.body.token as string };
    const first = await cli(carol.token, ['review', 'my-node', '--star', '5']);
    expect(first.code).toBe(0);
    await cli(carol.token, ['review', 'my-node', '--star', '4']);
    const json = await cli(bob.token, ['--json', 'review', 'my-node', '--star', '2']);
    expect(json.code).toBe(0);
    const node = (await api('/nodes/my-node')).body;
    expect(node.rating).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: 'my-node', rating: 3 });
    expect((await cli(carol.token, ['review', 'ghost', '--star', '3'])).code).toBe(5);
    // the node's own publisher may not rate it
    const own = await cli(alice.token, ['review', 'my-node', '--star', '5']);
    expect(own.code).toBe(4);
    expect(own.stderr).toContain('members of publisher');
    expect((await cli(undefined, ['review', 'my-node', '--star', '3'])).code).toBe(4);
  });
});

describe('login, logout, whoami with a saved profile', () => {
  const configFile = (home: string) => join(home, '.config', 'nodereg', 'config.json');

  it('login checks the token, saves it with mode 0600 and never prints it, even with --verbose', async () => {
    const home = tempDir('nodereg-home-');
    const login = await runInProcess(['--verbose', 'login', '--registry', url, '--token', alice.token], { home });
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`logged in to ${url} as alice`);
    expect(login.stdout + login.stderr).not.toContain(alice.token);
    expect(login.stdout + login.stderr).not.toContain(alice.token.slice(6, 20));
    const file = configFile(home);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default).toEqual({ registry: url, token: alice.token });

    const whoami = await runInProcess(['--verbose', 'whoami'], { home });
    expect(whoami.code).toBe(0);
    expect(whoami.stdout).toContain('alice');
    expect(whoami.stderr).toContain('from profile');
    expect(whoami.stdout + whoami.stderr).not.toContain(alice.token);

    const logout = await runInProcess(['logout'], { home });
    expect(logout.code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default).toEqual({ registry: url });
    const after = await runInProcess(['whoami'], { home });
    expect(after.code).toBe(4);
  });

  it('a bad token saves nothing (4); a token piped on stdin goes into the named profile', async () => {
    const home = tempDir('nodereg-home-');
    const bad = await runInProcess(['login', '--registry', url, '--token', 'nrg_u_wrong'], { home });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain('nothing was saved');
    expect(existsSync(configFile(home))).toBe(false);

    const piped = await runInProcess(['--json', 'login', '--registry', url, '--profile', 'work'], {
      home,
      input: `${bob.token}\n`,
    });
    expect(piped.code).toBe(0);
    const body = JSON.parse(piped.stdout);
    expect(body).toMatchObject({ profile: 'work', registry: url, me: { kind: 'user', user: { name: 'bob' } } });
    expect(piped.stdout).not.toContain(bob.token);
    expect(JSON.parse(readFileSync(configFile(home), 'utf8')).profiles).toEqual({
      work: { registry: url, token: bob.token },
    });
    expect((await runInProcess(['--profile', 'work', 'whoami'], { home })).stdout).toContain('bob');
    // the default profile has no token
    expect((await runInProcess(['--registry', url, 'whoami'], { home })).code).toBe(4);
  });

  it('without a terminal and without --token or stdin, login names them (2)', async () => {
    const home = tempDir('nodereg-home-');
    const result = await runInProcess(['login', '--registry', url], { home });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--token');
    expect(result.stderr).toContain('stdin');
    const saved = existsSync(configFile(home)) ? JSON.parse(readFileSync(configFile(home), 'utf8')).profiles : {};
    expect(saved).toEqual({});
  });
});

describe('exit codes without a server', () => {
  it('a closed port is 1 (network) for a valid request, and still 2 for invalid input', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const down = await runInProcess(['--registry', dead, 'node', 'show', 'my-node']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`cannot reach ${dead}`);
    const invalid = await runInProcess([
      '--registry',
      dead,
      '--token',
      'nrg_u_x',
      '--json',
      'review',
      'my-node',
      '--star',
      '7',
    ]);
    expect(invalid.code).toBe(2);
    expect(JSON.parse(invalid.stdout).error.message).toContain('--star');
  });
});

describe('completion', () => {
  it('bash completes every command of commands/index.ts, subcommands and options', async () => {
    const script = (await runInProcess(['completion', 'bash'])).stdout;
    const complete = (line: string) => {
      const words = line.split(' ');
      const program = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _nodereg; echo "\${COMPREPLY[*]}"`;
      return execFileSync('bash', ['-c', program], { encoding: 'utf8' }).trim().split(' ');
    };
    expect(complete('nodereg ').sort()).toEqual(commands.map((c) => c.name).sort());
    expect(complete('nodereg node ')).toEqual(['update', 'show', 'versions', 'search', 'list', 'download']);
    expect(complete('nodereg publisher members ')).toEqual(['add', 'remove', 'list']);
    expect(complete('nodereg --json version d')).toEqual(['deprecate']);
    expect(complete('nodereg node update my-node --re')).toEqual([
      '--repository',
      '--requires-app',
      '--requires-app-frontend',
      '--registry',
      '--retry-window',
    ]);
  });

  it('zsh and fish scripts name every command and subcommand', async () => {
    const zsh = (await runInProcess(['completion', 'zsh'])).stdout;
    const fish = (await runInProcess(['completion', 'fish'])).stdout;
    expect(zsh).toContain('#compdef nodereg');
    for (const name of [...commands.map((c) => c.name), 'deprecate', 'members']) {
      expect(zsh).toContain(`'${name}:`);
      expect(fish).toContain(`-a ${name} `);
    }
    expect(fish).toContain(
      "complete -c nodereg -n '__fish_seen_subcommand_from node; and __fish_seen_subcommand_from update' -l publisher",
    );
  });
});

function findFile(dir: string, test: (path: string) => boolean): string | undefined {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = findFile(path, test);
      if (found) return found;
    } else if (test(path)) return path;
  }
  return undefined;
}
