// Every command and subcommand listed in commands/index.ts has help with examples, kept stable by
// a snapshot. A new command adds a snapshot (run `npx vitest run test/cli/help.test.ts -u` once).
import { describe, expect, it } from 'vitest';
import { commandTree, flatten } from '../../src/cli/command-tree.js';
import { commands } from '../../src/cli/commands/index.js';
import { runInProcess } from './in-process.js';

const tree = await commandTree(commands, '0.0.0-test');
const all = flatten(tree.commands);

describe('help', () => {
  it('the tree holds every command of commands/index.ts', () => {
    expect(tree.commands.map((c) => c.name)).toEqual(commands.map((c) => c.name));
    // the groups this project's registry commands rely on
    expect(all.map((c) => c.path.join(' '))).toEqual(
      expect.arrayContaining([
        'node update',
        'publisher members add',
        'version deprecate',
        'token revoke',
        'user create',
      ]),
    );
  });

  it.each(all.map((c) => [c.path.join(' ')]))(
    'nodereg %s --help has examples and matches its snapshot',
    async (path) => {
      const result = await runInProcess([...path.split(' '), '--help']);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain('Examples:');
      expect(result.stdout).toContain(`Usage: nodereg ${path}`);
      expect(result.stdout).toMatchSnapshot();
    },
  );

  it("help <command> <sub> shows the sub-command's help (it showed the group's); help of no command is exit 2 with a suggestion (it was the top help, exit 0)", async () => {
    const viaHelp = await runInProcess(['help', 'node', 'show']);
    expect(viaHelp.stdout).toBe((await runInProcess(['node', 'show', '--help'])).stdout);
    expect(viaHelp.stdout).toContain('Usage: nodereg node show');
    const typo = await runInProcess(['help', 'pubish']);
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe('');
    expect(typo.stderr).toContain("error: unknown command 'pubish'\n(Did you mean publish?)");
  });

  it('help <command> shows the same text as <command> --help', async () => {
    const viaHelp = await runInProcess(['help', 'publisher']);
    const viaFlag = await runInProcess(['publisher', '--help']);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });

  it('a command group without its subcommand (nodereg token) is exit 2 with its help on stderr, as help nosuch is', async () => {
    const groups = all.filter((c) => c.subcommands.length > 0).map((c) => c.path);
    expect(groups).toContainEqual(['token']);
    for (const path of groups) {
      const result = await runInProcess(path);
      expect(result.code, path.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`Usage: nodereg ${path.join(' ')}`);
    }
    const json = await runInProcess(['token', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      error: { code: 'invalid_input', message: 'nodereg token needs a command (its help lists them)' },
    });
  });
});
