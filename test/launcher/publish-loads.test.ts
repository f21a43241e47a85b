// A valid `nodereg publish` loads neither zod nor a schema module of the contract (issue 15): the
// manifest is checked with the generated request checks, and every request goes through the generated
// routes. The built binary runs with hooks that record each file Node loads; the bundle's chunks keep
// a `// path` line above each module they hold, so what a run loaded says what it carries. A
// manifest with problems is worded by the generated checks too. `nodereg openapi`, which builds its
// document from the schemas, must load zod: that run proves the record can fail.
// `node show ID` is held to the same: a generated check checks its id and words a bad one;
// and so is a request field `precheck` refuses (`review --star 9`). semver, which builds its regular
// expressions when it loads, comes only with a check of a version range: publish's, not node show's;
// nor does node show load the checks of requests it does not send, or another subcommand's code.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliRecordingLoads, startServer, tempDir, type TestServer } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';

const root = resolve(import.meta.dirname, '../..');

/** The contract's modules that import zod at run time (schemas); the others are plain data and functions. */
const schemaModules = readdirSync(join(root, 'src/contract'), { recursive: true, encoding: 'utf8' })
  .filter(
    (file) =>
      file.endsWith('.ts') &&
      /^import (?!type )[^;]*from 'zod'/m.test(readFileSync(join(root, 'src/contract', file), 'utf8')),
  )
  .map((file) => `src/contract/${file}`);

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
  const reply = await fetch(`${server.url}/publishers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'lean' }),
  });
  expect(reply.status).toBe(201);
});
afterAll(() => server?.close());

function project(toolLines: string[] = [], publisher = 'lean') {
  const id = `lean-${randomBytes(3).toString('hex')}`;
  const dir = tempDir();
  writeTree(dir, {
    'pyproject.toml': `[project]\nname = "${id}"\nversion = "1.0.0"\ndescription = "A node"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "${publisher}"\n${toolLines.join('\n')}\n`,
    LICENSE: 'MIT',
    '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    'web/icon.png': randomBytes(2000),
  });
  return dir;
}

/** Runs the CLI with the hook; answers with its result and what each file it loaded from the bundle carries. */
async function recorded(args: string[]) {
  const { result, files } = await runCliRecordingLoads(args, {
    env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: server.adminToken },
  });
  const modules = files.flatMap((file) =>
    [
      ...readFileSync(join(root, 'dist', file), 'utf8').matchAll(
        /^\/\/ (?:\.\.\/)*(?:[\w.-]+\/)*?((?:node_modules|src)\/\S+)$/gm,
      ),
    ].map((m) => m[1]),
  );
  return {
    result,
    files,
    modules,
    zod: modules.filter((m) => m.startsWith('node_modules/zod/')),
    semver: modules.filter((m) => m.startsWith('node_modules/semver/')),
    schemas: modules.filter((m) => schemaModules.includes(m)),
  };
}

describe('nodereg publish of a valid project', () => {
  it('knows the contract modules that need zod', () => {
    expect(schemaModules).toEqual(
      expect.arrayContaining([
        'src/contract/resources/publish.ts',
        'src/contract/registry.ts',
        'src/contract/fields.ts',
      ]),
    );
    expect(schemaModules).not.toContain('src/contract/rules.ts');
  });

  it('records zod and the schema modules where a command loads them: openapi', async () => {
    const run = await recorded(['openapi']);
    expect(run.result.code, run.result.stderr).toBe(0);
    expect(run.zod.length).toBeGreaterThan(0);
    expect(run.schemas).toContain('src/contract/resources/publish.ts');
  });

  it('publishes without loading zod or a schema module', async () => {
    const run = await recorded([
      'publish',
      project(['tags = ["image"]', 'icon = "https://example.com/icon.png"', 'requires-app = ">=1.0"']),
      '--json',
    ]);
    expect(run.result.stderr).toBe('');
    expect(run.result.code).toBe(0);
    expect(JSON.parse(run.result.stdout)).toMatchObject({
      publisher_id: 'lean',
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
    });
    expect(run.files).toContain('cli/main.js'); // the record holds the run's files
    expect(run.zod).toEqual([]);
    expect(run.schemas).toEqual([]);
    // requires-app is a version range: the publish body's check reads it with semver
    expect(run.semver).toContain('node_modules/semver/ranges/valid.js');
  });

  it('creates a missing publisher (--create-publisher) and reports a published version (--skip-existing) without zod', async () => {
    const dir = project([], `lean-${randomBytes(3).toString('hex')}`);
    const created = await recorded(['publish', dir, '--create-publisher']);
    expect(created.result.stderr).toContain('created publisher lean-');
    expect(created.result.code).toBe(0);
    const again = await recorded(['publish', dir, '--skip-existing', '--json']);
    expect(again.result.code).toBe(0);
    expect(JSON.parse(again.result.stdout)).toMatchObject({ skipped: true });
    for (const run of [created, again]) expect([...run.zod, ...run.schemas]).toEqual([]);
  });

  it('words each problem of a manifest as the contract does, without loading zod', async () => {
    const run = await recorded([
      'publish',
      project(['icon = "example.com/icon.png"', 'tags = ["x", "' + 't'.repeat(65) + '"]']),
    ]);
    expect(run.result.code).toBe(2);
    expect(run.result.stderr).toContain(
      '[tool.nodereg] icon: must be an absolute http:// or https:// URL, such as https://example.com/page (or "" for none)',
    );
    expect(run.result.stderr).toContain('[tool.nodereg] tags: must be at most 64 characters long (item 2)');
    expect([...run.zod, ...run.schemas]).toEqual([]);
  });
});

describe('nodereg node show', () => {
  it('shows a node without loading zod, a schema module or semver', async () => {
    const run = await recorded(['node', 'show', 'lean-missing-node', '--json']);
    // the registry's 404, worded as the CLI does: the id passed its check and the request was sent
    expect(run.result.code).toBe(5);
    expect(run.result.stderr).toContain('nodereg node search lean-missing-node');
    expect(run.files).toContain('cli/main.js');
    expect(run.zod).toEqual([]);
    expect(run.schemas).toEqual([]);
    expect(run.semver).toEqual([]);
    // nor what only other commands run: the checks of requests, the download of an archive
    expect(run.modules).not.toContain('src/contract/operation-checks.ts');
    expect(run.modules).not.toContain('src/cli/commands/node/download.ts');
  });

  it('refuses a request field in the server’s words, without loading zod', async () => {
    const run = await recorded(['review', 'lean-missing-node', '--star', '9']);
    expect(run.result.code).toBe(2);
    expect(run.result.stderr).toContain('invalid --star (star): must be at most 5');
    expect(run.modules).toContain('src/contract/operation-checks.ts');
    expect(run.zod).toEqual([]);
    expect(run.schemas).toEqual([]);
  });

  it('refuses an id the rule refuses in the contract’s words, without loading zod', async () => {
    const run = await recorded(['node', 'show', 'bad!id']);
    expect(run.result.code).toBe(2);
    expect(run.result.stderr).toContain(
      'invalid <nodeId> "bad!id": must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit',
    );
    expect(run.zod).toEqual([]);
    expect(run.schemas).toEqual([]);
  });
});
