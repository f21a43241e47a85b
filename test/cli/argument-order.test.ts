// Arguments in the wrong place get our words for every command, not commander's ("too many arguments
// for 'show'", "required option '--message <text>' not specified"), and each hint runs as printed (issue 37).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { createPublisher, createUser, publishAndUpload, type TestUser } from '../server/fixtures.js';
import { runHints } from './hints.js';
import { runInProcess } from './in-process.js';

let registry: TestServer;
let owner: TestUser;

beforeAll(async () => {
  registry = await startServer();
  owner = await createUser(registry, 'argowner');
  await createPublisher(registry, owner, 'argpub');
  await publishAndUpload(registry, owner.token, 'argpub', 'arg-node', '1.0.0');
});
afterAll(() => registry?.close());

const options = () => ({ env: { NODEREG_REGISTRY: registry.url, NODEREG_TOKEN: owner.token } });

describe('arguments in the wrong place', () => {
  it('a version before the node id: the hint is the line in the right order, and it runs', async () => {
    const swapped = await runInProcess(['version', 'update', '1.0.0', 'arg-node', '--changelog', 'Fixed'], options());
    expect(swapped.code).toBe(2);
    expect(swapped.stderr).toContain('the node id goes first, then the version: "1.0.0" is a version');
    const [fixed] = await runHints(swapped.stderr, options());
    expect(fixed.argv).toEqual(['version', 'update', 'arg-node', '1.0.0', '--changelog', 'Fixed']);
    expect(fixed.result.code, fixed.result.stderr).toBe(0);
    const version = (await (await fetch(`${registry.url}/nodes/arg-node/versions/1.0.0`)).json()) as {
      changelog: string;
    };
    expect(version.changelog).toBe('Fixed');
  });

  it('a value typed without its required option: named, and the hint puts the option in', async () => {
    const result = await runInProcess(['version', 'appeal', 'arg-node', '1.0.0', 'a false positive'], options());
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('not specified');
    expect(result.stderr).toContain('version appeal needs --message <text>');
    const [fixed] = await runHints(result.stderr, options());
    expect(fixed.argv).toEqual(['version', 'appeal', 'arg-node', '1.0.0', '--message', 'a false positive']);
    // parsed now: the registry answers for the version, which is not flagged
    expect(fixed.result.stderr).not.toContain('needs --message');
    expect(fixed.result.stderr).toMatch(/flagged/i);
  });

  it('one argument too many, or one missing: what the command takes, and a help hint that runs', async () => {
    for (const [argv, said] of [
      [['node', 'show', 'arg-node', '1.0.0'], 'node show takes <nodeId>; "1.0.0" is one argument too many'],
      [['version', 'withdraw', 'arg-node'], 'version withdraw takes <nodeId> <version>: <version> is missing'],
      [['publisher', 'members', 'add', 'argpub'], 'publisher members add takes <id> <user>: <user> is missing'],
    ] as const) {
      const result = await runInProcess([...argv], options());
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(said);
      expect(result.stderr).not.toMatch(/too many arguments|missing required argument/);
      const [help] = await runHints(result.stderr, options());
      expect(help.argv).toEqual([...argv.slice(0, argv[0] === 'publisher' ? 3 : 2), '--help']);
      expect(help.result.code).toBe(0);
    }
    const json = await runInProcess(['node', 'show', 'arg-node', '1.0.0', '--json'], options());
    expect(JSON.parse(json.stdout).error.code).toBe('invalid_input');
  });
});
