// Issue 37's defects through the spawned binary, as a publisher meets them: one run each, batched.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli, startServer, type TestServer } from '../helpers.js';
import { closedPort } from '../cli/in-process.js';
import { addMember, createPublisher, createUser, type TestUser } from '../server/fixtures.js';

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
