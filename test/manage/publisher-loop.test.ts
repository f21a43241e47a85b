// The publisher's daily loop (issue 37): members named by name or e-mail, the lists, tokens revoked by
// what `token list` shows, `node show ID@VERSION`, and hints that run as printed (test/cli/hints.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { runInProcess } from '../cli/in-process.js';
import { runHints } from '../cli/hints.js';
import {
  addMember,
  createPat,
  createPublisher,
  createUser,
  publishAndUpload,
  type TestUser,
} from '../server/fixtures.js';

let registry: TestServer;
let owner: TestUser;
let bob: TestUser;

beforeAll(async () => {
  registry = await startServer();
  owner = await createUser(registry, 'loopowner');
  bob = await createUser(registry, 'loopbob');
  await createPublisher(registry, owner, 'looppub');
  await publishAndUpload(registry, owner.token, 'looppub', 'loop-node', '1.0.0');
});
afterAll(() => registry?.close());

const as = (user: TestUser) => ({ env: { NODEREG_REGISTRY: registry.url, NODEREG_TOKEN: user.token } });

describe('members', () => {
  it('members remove takes the name or the e-mail that add takes; members list shows them; accept reads "a member of"', async () => {
    for (const named of ['loopbob', 'loopbob@example.org']) {
      await addMember(registry, owner, 'looppub', bob);
      const listed = await runInProcess(['publisher', 'members', 'list', 'looppub', '--json'], as(owner));
      expect(listed.code, listed.stderr).toBe(0);
      expect(
        JSON.parse(listed.stdout)
          .map((m: { user: { name: string } }) => m.user.name)
          .sort(),
      ).toEqual(['loopbob', 'loopowner']);
      const removed = await runInProcess(['publisher', 'members', 'remove', 'looppub', named], as(owner));
      expect(removed.code, removed.stderr).toBe(0);
      expect(removed.stderr).not.toContain('warning');
      const after = await runInProcess(['publisher', 'members', 'list', 'looppub'], as(owner));
      expect(after.stdout).not.toContain('loopbob');
    }
    const invited = await runInProcess(['publisher', 'members', 'add', 'looppub', 'loopbob'], as(owner));
    expect(invited.code, invited.stderr).toBe(0);
    const [accept] = await runHints(invited.stderr, as(bob));
    expect(accept.argv).toEqual(['publisher', 'accept', 'looppub']);
    expect(accept.result.stdout).toContain('you are now a member of looppub');
    const promoted = await runInProcess(
      ['publisher', 'members', 'add', 'looppub', 'loopbob', '--role', 'owner'],
      as(owner),
    );
    expect(promoted.stdout).toContain('is now an owner of looppub');
  });

  it('removing oneself warns that one’s publisher tokens go with the membership', async () => {
    const carol = await createUser(registry, 'loopcarol');
    await addMember(registry, owner, 'looppub', carol, 'owner');
    const removed = await runInProcess(['publisher', 'members', 'remove', 'looppub', 'loopcarol'], as(carol));
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toContain('warning: you removed yourself from looppub: the looppub tokens you created');
    // refused (the last owner stays): nothing was removed, so nothing is said to be revoked
    const dave = await createUser(registry, 'loopdave');
    await createPublisher(registry, dave, 'davepub');
    const kept = await runInProcess(['publisher', 'members', 'remove', 'davepub', 'loopdave'], as(dave));
    expect(kept.code).not.toBe(0);
    expect(kept.stderr).toContain('a publisher keeps at least one owner');
    expect(kept.stderr).not.toContain('revoked');
  });

  it('an unknown member is exit 5 and its hint lists the members', async () => {
    const missing = await runInProcess(['publisher', 'members', 'remove', 'looppub', 'nobody'], as(owner));
    expect(missing.code).toBe(5);
    const [list] = await runHints(missing.stderr, as(owner));
    expect(list.argv).toEqual(['publisher', 'members', 'list', 'looppub']);
    expect(list.result.code).toBe(0);
  });
});

describe('lists', () => {
  it('publisher list shows one’s publishers and role, --json an array', async () => {
    const listed = await runInProcess(['publisher', 'list', '--json'], as(owner));
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([{ id: 'looppub', role: 'owner' }]);
    const text = await runInProcess(['publisher', 'list', '--mine'], as(owner));
    expect(text.stdout).toMatch(/looppub\s+owner/);
  });
});

describe('tokens', () => {
  it('token revoke takes the token itself, its shown prefix or its name, and never echoes the token', async () => {
    const lister = await createUser(registry, 'looptokens');
    await createPublisher(registry, lister, 'looptokpub');
    const byName = await createPat(registry, lister, 'looptokpub', 'by-name');
    const byPrefix = await createPat(registry, lister, 'looptokpub', 'by-prefix');
    const itself = await createPat(registry, lister, 'looptokpub', 'itself');
    const revoke = (what: string) => runInProcess(['token', 'revoke', what, '--publisher', 'looptokpub'], as(lister));
    const results = [await revoke('by-name'), await revoke(`${byPrefix.slice(0, 12)}…`), await revoke(itself)];
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(results.map((r) => r.stdout).join('')).not.toContain(itself);
    const left = await runInProcess(['token', 'list', '--publisher', 'looptokpub', '--json'], as(lister));
    expect(JSON.parse(left.stdout)).toEqual([]);
    const gone = await revoke(byName);
    expect(gone.code).toBe(5);
    expect(gone.stderr).not.toContain(byName);
    for (const { result } of await runHints(gone.stderr, as(lister))) expect(result.code).toBe(0);
  });
});

describe('reads', () => {
  it('node show ID@VERSION shows that version, a short version meaning its full form', async () => {
    const shown = await runInProcess(['node', 'show', 'loop-node@1.0', '--json'], as(owner));
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ version: '1.0.0', status: 'NodeVersionStatusActive' });
    const missing = await runInProcess(['node', 'show', 'loop-node@9.9.9'], as(owner));
    expect(missing.code).toBe(5);
    const [versions] = await runHints(missing.stderr, as(owner));
    expect(versions.result.stdout).toContain('1.0.0');
  });

  it('search, show, versions and download without `node` name the node command, which runs as printed', async () => {
    for (const argv of [
      ['search', 'loop'],
      ['show', 'loop-node'],
      ['versions', 'loop-node'],
    ]) {
      const typed = await runInProcess(argv, as(owner));
      expect(typed.code).toBe(2);
      expect(typed.stderr).not.toContain('serve');
      const [hinted] = await runHints(typed.stderr, as(owner));
      expect(hinted.argv).toEqual(['node', ...argv]);
      expect(hinted.result.code, hinted.result.stderr).toBe(0);
      expect(hinted.result.stdout).toContain(argv[0] === 'versions' ? '1.0.0' : 'loop-node');
    }
    const dir = tempDir();
    const download = await runInProcess(['download', 'loop-node', '--out', `${dir}/`], as(owner));
    const [hinted] = await runHints(download.stderr, as(owner));
    expect(hinted.result.code, hinted.result.stderr).toBe(0);
  });
});

describe('hints that keep the profile and need no token', () => {
  it('a hint keeps the --profile and --registry typed: run as printed, it acts on that registry', async () => {
    const home = tempDir();
    const saved = await runInProcess(
      ['login', '--profile', 'elsewhere', '--registry', registry.url, '--token', owner.token],
      {
        home,
      },
    );
    expect(saved.code, saved.stderr).toBe(0);
    const typed = ['--profile', 'elsewhere', '--registry', registry.url];
    const missing = await runInProcess([...typed, 'publisher', 'show', 'typedpub'], { home });
    expect(missing.code).toBe(5);
    const [create] = await runHints(missing.stderr, { home });
    expect(create.argv).toEqual(['publisher', 'create', 'typedpub', ...typed]);
    expect(create.result.code, create.result.stderr).toBe(0);
    expect((await runInProcess(['publisher', 'show', 'typedpub'], as(owner))).code).toBe(0);
  });

  it('after logout --profile bob, the hint to log in names the profile; a refused token is not sent to `token create`', async () => {
    const home = tempDir();
    const env = { NODEREG_REGISTRY: registry.url };
    const saved = await runInProcess(['login', '--profile', 'bob', '--token', bob.token], { env, home });
    expect(saved.code, saved.stderr).toBe(0);
    expect((await runInProcess(['logout', '--profile', 'bob'], { env, home })).code).toBe(0);
    const whoami = await runInProcess(['whoami', '--profile', 'bob'], { env, home });
    expect(whoami.code).toBe(4);
    const [login] = await runHints(whoami.stderr, { env, home, input: bob.token });
    expect(login.argv).toEqual(['login', '--profile', 'bob']);
    expect(login.result.code, login.result.stderr).toBe(0);
    expect((await runInProcess(['whoami', '--profile', 'bob'], { env, home })).stdout).toContain('loopbob');
    const refused = await runInProcess(['login', '--token', 'nrg_u_notatoken'], { env, home });
    expect(refused.code).toBe(4);
    expect(refused.stderr).not.toContain('token create');
  });
});

describe('version withdraw', () => {
  it('says it is for good: in CI it needs --yes (the hint runs), on a terminal it asks; update --status deleted points to it', async () => {
    await publishAndUpload(registry, owner.token, 'looppub', 'loop-node', '2.0.0');
    const viaUpdate = await runInProcess(['version', 'update', 'loop-node', '2.0.0', '--status', 'deleted'], as(owner));
    expect(viaUpdate.code).toBe(2);
    const declined = await runInProcess(['version', 'withdraw', 'loop-node', '2.0.0'], {
      ...as(owner),
      interactive: true,
      prompts: async () => ({ ...(await import('@inquirer/prompts')), confirm: async () => false }),
    });
    expect(declined.code).toBe(130);
    expect(declined.stderr).toContain('kept loop-node 2.0.0: nothing was changed');
    const unasked = await runInProcess(['version', 'withdraw', 'loop-node', '2.0.0'], as(owner));
    expect(unasked.code).toBe(2);
    expect(unasked.stderr).toContain('the version number 2.0.0 can never be published again');
    const shown = await runInProcess(['node', 'show', 'loop-node@2.0.0', '--json'], as(owner));
    expect(JSON.parse(shown.stdout).status).toBe('NodeVersionStatusActive');
    const [withdraw] = await runHints(unasked.stderr, as(owner));
    expect(withdraw.argv).toEqual(['version', 'withdraw', 'loop-node', '2.0.0', '--yes']);
    expect(withdraw.result.code, withdraw.result.stderr).toBe(0);
    expect(withdraw.result.stdout).toContain('withdrew loop-node 2.0.0');
    const [viaHint] = await runHints(viaUpdate.stderr, as(owner));
    expect(viaHint.result.stdout).toContain('already withdrawn');
  });
});

describe('arguments in the wrong order', () => {
  it('review ID 5 and version deprecate VERSION ID get our message, and a hint that runs as printed', async () => {
    // a reader, not a member of looppub: members may not review their own publisher's nodes
    const reader = await createUser(registry, 'loopreader');
    const review = await runInProcess(['review', 'loop-node', '4'], as(reader));
    expect(review.code).toBe(2);
    expect(review.stderr).not.toContain('too many arguments');
    const [rated] = await runHints(review.stderr, as(reader));
    expect(rated.argv).toEqual(['review', 'loop-node', '--star', '4']);
    expect(rated.result.code, rated.result.stderr).toBe(0);
    const missing = await runInProcess(['review', 'loop-node'], as(reader));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('the stars are missing: they go in --star');
    // a --star value as typed is quoted in the hint: copied, it runs nothing else
    const typed = await runInProcess(['review', 'loop-node', 'extra', '--star', '4;$(id)'], as(reader));
    expect(typed.code).toBe(2);
    expect(typed.stderr).toContain("`nodereg review loop-node --star '4;$(id)'`");
    const swapped = await runInProcess(['version', 'deprecate', '1.0.0', 'loop-node'], as(owner));
    expect(swapped.code).toBe(2);
    expect(swapped.stderr).not.toContain('neither a version nor a semver range');
    const [deprecate] = await runHints(swapped.stderr, as(owner));
    expect(deprecate.argv).toEqual(['version', 'deprecate', 'loop-node', '1.0.0']);
    expect(deprecate.result.code, deprecate.result.stderr).toBe(0);
  });
});
