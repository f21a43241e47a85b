// The check every CLI run of the tests makes of its hints (hint-check.ts): the commands in backticks parse
// with the real program, stopped before the action (a preAction hook of the test's, parseOnly), in text and in JSON output.
import { describe, expect, it } from 'vitest';
import { checkHints, hintsOf, parseOnly, shellHazard, shellWords } from './hint-check.js';
import { countingServer } from './in-process.js';

const parseWith = (argv: string[], env: Record<string, string> = {}) =>
  parseOnly(argv, { env: { CI: '1', NO_COLOR: '1', ...env } });

describe('parse-only runs', () => {
  it('stop before the action: a command that would send a request sends none and exits 0', async () => {
    const registry = await countingServer();
    try {
      const parsed = await parseWith(['publisher', 'create', 'acme', '--name', 'Acme'], {
        NODEREG_REGISTRY: registry.url,
        NODEREG_TOKEN: 'nrg_u_x',
      });
      expect(parsed).toEqual({ code: 0, stderr: '' });
      expect(registry.count()).toBe(0);
    } finally {
      await registry.close();
    }
  });

  it("fail as commander fails: an unknown option, a missing argument, an option's missing value", async () => {
    expect((await parseWith(['publisher', 'create', 'acme', '--nosuch'])).code).toBe(2);
    expect((await parseWith(['publisher', 'create'])).code).toBe(2);
    expect((await parseWith(['publisher', 'create', 'acme', '--name'])).code).toBe(2);
    expect((await parseWith(['nosuch'])).stderr).toContain("unknown command 'nosuch'");
  });
});

describe('checkHints', () => {
  it('passes the hints whose commands parse, and fails naming each one that does not', async () => {
    await checkHints('', 'error: x\nhint: run `nodereg publisher show acme` or `nodereg login --profile bob`\n');
    await expect(checkHints('', 'hint: run `nodereg publisher shw acme`\n')).rejects.toThrow(
      /hint "run `nodereg publisher shw acme`": `nodereg publisher shw acme` does not run as printed: .*unknown command 'shw'/,
    );
    await expect(checkHints('', 'hint: see `nodereg whoami --nosuch`\n')).rejects.toThrow(/unknown option '--nosuch'/);
  });

  it('fails a command a shell would act on as copied: user text unquoted (;, &, |, $(…), a backtick)', async () => {
    await expect(checkHints('', 'hint: `nodereg login --profile x;touch y`\n')).rejects.toThrow(/unquoted ;/);
    await expect(checkHints('', 'hint: `nodereg login --profile "a$(id)"`\n')).rejects.toThrow(
      /a command substitution \$\(/,
    );
    expect(shellHazard(`login --profile 'x;touch y$(id)' --database "$NODEREG_DATABASE_URL"`)).toBeUndefined();
    expect(shellHazard('config set registry https://h/?a=1&b=2')).toBe('an unquoted &');
    // a quote left open (a backtick in the text ends the command early) fails instead of hanging the check
    expect(shellWords("login --profile 'a")).toEqual(['login', '--profile', 'a']);
    await expect(checkHints('', "hint: `nodereg login --profile 'a`id`'`\n")).rejects.toThrow(/an unclosed '/);
  });

  it('fails a placeholder printed as a command: it does not run as printed', async () => {
    await expect(checkHints('', 'hint: enable it (`nodereg user enable <user>`)\n')).rejects.toThrow(
      /<user> is a placeholder/,
    );
    await expect(checkHints('', 'hint: `nodereg publisher create x --name ...`\n')).rejects.toThrow(
      /\.\.\. is a placeholder/,
    );
  });

  it('tells a value in capitals from a placeholder: a placeholder names the slot it stands in', async () => {
    // real values: a name, a tag, an environment, in capitals
    await checkHints('', 'hint: `nodereg publisher create acme --name ACME`\n');
    await checkHints('', 'hint: `nodereg publisher update acme --name=MIT --description NSFW`\n');
    // placeholders: the option's name or its value's, an argument's, or a kind of value (URL, FILE, OUT…)
    await expect(checkHints('', 'hint: `nodereg publisher create acme --name NAME`\n')).rejects.toThrow(
      /NAME is a placeholder/,
    );
    await expect(checkHints('', 'hint: `nodereg config set registry URL`\n')).rejects.toThrow(/URL is a placeholder/);
    await expect(checkHints('', 'hint: `nodereg publisher show PUBLISHER_ID`\n')).rejects.toThrow(
      /PUBLISHER_ID is a placeholder/,
    );
    await expect(checkHints('', 'hint: `nodereg scan --sarif OUT`\n')).rejects.toThrow(/OUT is a placeholder/);
  });

  it('finds a placeholder joined to another (ID@VERSION, <id>@<version>) and one in the plural (IDS, FILES)', async () => {
    await expect(checkHints('', 'hint: `nodereg node show ID@VERSION`\n')).rejects.toThrow(/ID is a placeholder/);
    await expect(checkHints('', 'hint: `nodereg node show acme@VERSION`\n')).rejects.toThrow(
      /VERSION is a placeholder/,
    );
    await expect(checkHints('', 'hint: `nodereg node show <id>@<version>`\n')).rejects.toThrow(/<id> is a placeholder/);
    await expect(checkHints('', 'hint: `nodereg node show IDS`\n')).rejects.toThrow(/IDS is a placeholder/);
    await expect(checkHints('', 'hint: `nodereg node show NODE_IDS`\n')).rejects.toThrow(/NODE_IDS is a placeholder/);
    await expect(checkHints('', 'hint: `nodereg scan FILES...`\n')).rejects.toThrow(/FILES is a placeholder/);
    // within a value, and in braces
    await expect(checkHints('', 'hint: `nodereg scan --sarif <name>.sarif`\n')).rejects.toThrow(
      /<name> is a placeholder/,
    );
    await expect(checkHints('', 'hint: `nodereg scan --sarif report-{id}.json`\n')).rejects.toThrow(
      /{id} is a placeholder/,
    );
    await expect(checkHints('', 'hint: `nodereg node show {id}`\n')).rejects.toThrow(/{id} is a placeholder/);
    // values: a node and version in capitals, a shell variable, text with a space
    await checkHints('', 'hint: `nodereg node show ACME@1.0.0`\n');
    // values in capitals that share a word with a slot: an e-mail, node ids with a word of their own
    await checkHints('', 'hint: `nodereg user create ada --email ADMIN@ACME.COM --admin`\n');
    await checkHints('', 'hint: `nodereg node show ACME_NODES@1.0.0`\n');
    await checkHints('', 'hint: `nodereg node show URL_TOOLS`\n');
    await checkHints('', 'hint: `nodereg serve --database "$NODEREG_DATABASE_URL"`\n');
    await checkHints('', 'hint: `nodereg publisher update acme --description "Adds ID tags"`\n');
  });

  it('reads hints in JSON: a --json document, JSON lines, and the commands as a checkout or npx prints them', async () => {
    expect(
      hintsOf(
        '{\n  "error": {"code": "invalid_input", "hint": "run `nodereg a`"},\n  "nodes": [{"hint": "`nodereg b`"}]\n}\n',
        '{"time":"t","level":"hint","message":"`nodereg c`"}\n{"time":"t","level":"error","hint":"`nodereg d`"}\n',
      ),
    ).toEqual(['run `nodereg a`', '`nodereg b`', '`nodereg c`', '`nodereg d`']);
    await expect(checkHints('{"error":{"hint":"run `nodereg nosuch`"}}\n', '')).rejects.toThrow(/nodereg nosuch/);
    await expect(checkHints('', 'hint: run `node /x/bin/nodereg.js nosuch`\n')).rejects.toThrow(/nosuch/);
    await expect(checkHints('', 'hint: run `npx nodereg nosuch`\n')).rejects.toThrow(/nosuch/);
  });
});
