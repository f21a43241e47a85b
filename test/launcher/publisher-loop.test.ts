// Issue 37's defects through the spawned binary, as a publisher meets them: one run each, batched.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, startServer, type TestServer } from '../helpers.js';
import { closedPort } from '../cli/in-process.js';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { committedRepo } from '../package/fixtures.js';
import {
  addMember,
  createPat,
  createPublisher,
  createUser,
  makeZip,
  publishAndUpload,
  type TestUser,
} from '../server/fixtures.js';

let registry: TestServer;
let owner: TestUser;

beforeAll(async () => {
  registry = await startServer();
  owner = await createUser(registry, 'spawnowner');
  await createPublisher(registry, owner, 'spawnpub');
  await addMember(registry, owner, 'spawnpub', await createUser(registry, 'spawnbob'));
});
afterAll(() => registry?.close());

it('the spawned CLI: members removed by e-mail, search named as a node command, a group’s commands before the global options, a wait that says so', async () => {
  const env = { NODEREG_REGISTRY: registry.url, NODEREG_TOKEN: owner.token };
  const down = `http://127.0.0.1:${await closedPort()}`;
  const [removed, search, help, wait] = await Promise.all([
    runCli(['publisher', 'members', 'remove', 'spawnpub', 'spawnbob@example.org'], { env }),
    runCli(['search', 'flux'], { env }),
    runCli(['publisher', 'members', '--help']),
    runCli(['node', 'show', 'x'], { env: { NODEREG_REGISTRY: down, NODEREG_RETRY_WINDOW: '1s' } }),
  ]);
  expect(removed.code, removed.stderr).toBe(0);
  expect(removed.stdout).toContain('removed spawnbob@example.org from spawnpub');
  expect(search.code).toBe(2);
  expect(search.stderr).toContain("error: unknown command 'search': it is a node command");
  expect(search.stderr).toContain('hint: run `nodereg node search flux`');
  expect(search.stderr).not.toContain('serve');
  expect(help.stdout.indexOf('Commands:')).toBeGreaterThan(0);
  expect(help.stdout.indexOf('Commands:')).toBeLessThan(help.stdout.indexOf('Global Options:'));
  expect(help.stdout).toMatch(/Commands:\n\s+add \[options\] <id> <user>[^]*\n\s+remove <id> <user>[^]*\n\s+list <id>/);
  expect(wait.code).toBe(1);
  expect(wait.stderr).toContain(`waiting for GET ${down}/nodes/x (ECONNREFUSED), trying again for up to 1s`);
  expect(wait.stderr).toContain('within the retry window you set (NODEREG_RETRY_WINDOW 1s)');
});

/** A committed node project of publisher `publisher`, with `extra` files. */
function project(publisher: string, version = '1.0.0', extra: Record<string, string> = {}): string {
  return committedRepo({
    'pyproject.toml': `[project]\nname = "spawned-node"\nversion = "${version}"\ndescription = "x"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "${publisher}"\n`,
    '__init__.py': '',
    ...extra,
  });
}

const as = (user: TestUser) => ({ env: { NODEREG_REGISTRY: registry.url, NODEREG_TOKEN: user.token } });

it('the spawned CLI: the registry commands’ defects, each as a publisher meets it', async () => {
  const reader = await createUser(registry, 'spawnreader');
  const carol = await createUser(registry, 'spawncarol');
  await addMember(registry, owner, 'spawnpub', carol, 'owner');
  for (const version of ['1.0.0', '2.0.0'])
    await publishAndUpload(registry, owner.token, 'spawnpub', 'spawn-node', version);
  const node = { description: 'spawnword' };
  const risky = await makeZip({ '__init__.py': 'def run(text):\n    return eval(text)\n' });
  await publishAndUpload(registry, owner.token, 'spawnpub', 'spawn-flagged', '1.0.0', { node }, risky);
  await publishAndUpload(registry, owner.token, 'spawnpub', 'spawn-shown', '1.0.0', { node });
  const pat = await createPat(registry, owner, 'spawnpub', 'spawn-ci');
  const [revoked, shown, review, deprecate, refusedToken, update, withdraw, self, website, search] = await Promise.all([
    runCli(['token', 'revoke', 'spawn-ci', '--publisher', 'spawnpub'], as(owner)),
    runCli(['node', 'show', 'spawn-node@1.0', '--json'], as(owner)),
    runCli(['review', 'spawn-node', '4'], as(reader)),
    runCli(['version', 'deprecate', '1.0.0', 'spawn-node'], as(owner)),
    runCli(['login', '--token', 'nrg_u_notatoken'], { env: { NODEREG_REGISTRY: registry.url } }),
    runCli(['version', 'update', 'spawn-node', '2.0.0', '--status', 'deleted'], as(owner)),
    runCli(['version', 'withdraw', 'spawn-node', '2.0.0'], as(owner)),
    runCli(['publisher', 'members', 'remove', 'spawnpub', 'spawncarol'], as(carol)),
    runCli(['publisher', 'update', 'spawnpub', '--website', 'notaurl'], as(owner)),
    runCli(['node', 'search', 'spawnword', '--json'], as(owner)),
  ]);
  expect(revoked.code, revoked.stderr).toBe(0);
  expect(revoked.stdout).not.toContain(pat);
  expect(shown.code, shown.stderr).toBe(0);
  expect(JSON.parse(shown.stdout)).toMatchObject({ version: '1.0.0' });
  expect(review.code).toBe(2);
  expect(review.stderr).not.toContain('too many arguments');
  expect(review.stderr).toContain('hint: run `nodereg review spawn-node --star 4`');
  expect(deprecate.code).toBe(2);
  expect(deprecate.stderr).not.toContain('neither a version nor a semver range');
  expect(deprecate.stderr).toContain('`nodereg version deprecate spawn-node 1.0.0`');
  expect(refusedToken.code).toBe(4);
  expect(refusedToken.stderr).not.toContain('token create');
  expect(update.code).toBe(2);
  expect(update.stderr).toContain('`nodereg version withdraw spawn-node 2.0.0`');
  expect(withdraw.code).toBe(2);
  expect(withdraw.stderr).toContain('the version number 2.0.0 can never be published again');
  expect(self.code, self.stderr).toBe(0);
  expect(self.stderr).toContain('warning: you removed yourself from spawnpub');
  expect(website.code).toBe(2);
  expect(website.stderr).toContain('--website (website): must be an absolute http:// or https:// URL');
  expect(website.stderr).not.toContain('icon');
  expect(JSON.parse(search.stdout).nodes.map((n: { id: string }) => n.id)).toEqual(['spawn-shown']);
});

it('the spawned CLI: a project’s defects (unknown publisher, a version not X.Y.Z, a tracked file missing, the install hint)', async () => {
  const missing = project('spawnpub', '1.0.0', { 'weights/model.json': '{}\n' });
  rmSync(join(missing, 'weights/model.json'));
  const install =
    'import subprocess, sys\n\nsubprocess.check_call([sys.executable, "-m", "pip", "install", "-r", "requirements.txt"])\n';
  const [unknownPublisher, notPlain, dropped, runtime] = await Promise.all([
    runCli(['validate'], { cwd: project('nosuchpub'), env: { NODEREG_REGISTRY: registry.url } }),
    runCli(['validate', '--offline'], { cwd: project('spawnpub', '1.4.0rc1') }),
    runCli(['validate', '--offline'], { cwd: missing }),
    runCli(['scan'], { cwd: project('spawnpub', '1.0.0', { 'install.py': install }) }),
  ]);
  expect(unknownPublisher.code).toBe(5);
  expect(unknownPublisher.stderr).toContain(`publisher nosuchpub does not exist on ${registry.url}`);
  expect(unknownPublisher.stdout).not.toContain('ready to publish');
  expect(notPlain.code, notPlain.stderr).toBe(0);
  expect(notPlain.stderr).toContain('version 1.4.0-rc.1 is not plain X.Y.Z');
  expect(dropped.stderr).toContain(
    'warning: a file git tracks is missing from the working tree, so not in the archive: weights/model.json',
  );
  expect(runtime.code).toBe(1);
  expect(runtime.stdout).toContain(
    'keep the packages in requirements.txt (the manager installs that file; it does not read [project] dependencies)',
  );
});
