// A publisher who used the incumbent client switches to nodereg on a fresh machine: the repository as
// its `comfy node init` and publish workflow left it, what they type from habit, and the mistakes of a
// first run. The CLI in-process, against a real registry.
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { commitAll, committedRepo, git, writeTree } from '../package/fixtures.js';
import { createPat, createPublisher, createUser, type TestUser } from '../server/fixtures.js';

// As `comfy node init` writes it (description left empty), with the publisher's id filled in.
const PYPROJECT = `[project]
name = "comfyui-portrait-relight"
description = ""
version = "1.0.0"
license = { file = "LICENSE" }
dependencies = ["numpy>=1.26"]

[project.urls]
Repository = "https://example.org/ada/comfyui-portrait-relight"
#  Used by Comfy Registry https://comfyregistry.org

[tool.comfy]
PublisherId = "ada"
DisplayName = "Portrait Relight"
Icon = ""
includes = []
requires-comfyui = ">=0.3.0"
`;

const WORKFLOW = `name: Publish to Comfy registry
on:
  workflow_dispatch:
  push:
    branches: [main]
    paths: ["pyproject.toml"]
jobs:
  publish-node:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: Comfy-Org/publish-node-action@v1
        with:
          personal_access_token: \${{ secrets.REGISTRY_ACCESS_TOKEN }}
`;

const repo = () =>
  committedRepo({
    'pyproject.toml': PYPROJECT,
    '.gitignore': '__pycache__/\n*.pyc\n.venv/\nnode.zip\n',
    '.github/workflows/publish.yml': WORKFLOW,
    LICENSE: 'MIT License\n',
    'README.md': '# Portrait Relight\n',
    'requirements.txt': 'numpy>=1.26\n',
    '__init__.py':
      'from .nodes.relight import RelightPortrait\n\nNODE_CLASS_MAPPINGS = {"RelightPortrait": RelightPortrait}\nWEB_DIRECTORY = "./web"\n',
    'nodes/__init__.py': '',
    'nodes/relight.py': 'class RelightPortrait:\n    FUNCTION = "relight"\n',
    'web/js/relight.js': 'app.registerExtension({ name: "ada.relight" });\n',
  });

let server: TestServer;
let ada: TestUser;

beforeAll(async () => {
  server = await startServer();
  ada = await createUser(server, 'ada');
});
afterAll(() => server.close());

describe('habits of the incumbent client', () => {
  it('`nodereg node publish|validate|pack|init|scaffold` exits 2 naming the command that does it, and never prints the token', async () => {
    const cases: [string, string][] = [
      ['publish', 'publish'],
      ['validate', 'validate'],
      ['pack', 'pack'],
      ['init', 'init'],
      ['scaffold', 'init'],
    ];
    for (const [typed, ours] of cases) {
      const result = await runInProcess(['node', typed, '--token', 'nrg_pat_pastedsecret']);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(
        `error: there is no \`nodereg node ${typed}\`: ${ours} is a command of its own\nhint: run \`nodereg ${ours}\` with the same options`,
      );
      expect(result.stdout + result.stderr).not.toContain('pastedsecret');
    }
    const json = await runInProcess(['--json', 'node', 'publish']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({
      error: expect.objectContaining({
        code: 'invalid_input',
        message: 'there is no `nodereg node publish`: publish is a command of its own',
      }),
    });
    // not offered where commands are listed
    expect((await runInProcess(['node', '--help'])).stdout).not.toMatch(/\bpublish\b|scaffold/);
  });

  it('publish --token with the access token, as `comfy node publish --token` takes it: published, warned about the empty description; again: exit 3; --skip-existing: 0', async () => {
    const root = repo();
    const created = await runInProcess(['publisher', 'create', 'ada', '--name', 'Ada'], {
      cwd: root,
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: ada.token },
    });
    expect(created.code, created.stderr).toBe(0);
    // [tool.comfy] PublisherId names it already: nothing to edit
    expect(created.stderr).toContain('hint: publish with `nodereg publish` (pyproject.toml names this publisher)');
    const pat = await createPat(server, ada, 'ada');
    const env = { NODEREG_REGISTRY: server.url };

    const first = await runInProcess(['publish', '--token', pat, '--json'], { cwd: root, env });
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      publisher_id: 'ada',
      node_id: 'comfyui-portrait-relight',
      version: '1.0.0',
      files: 10,
    });
    expect(first.stderr).toContain(
      'warning: [project] description is empty: the node shows no description in search and on its page; add description = "what the node does" to [project]',
    );

    const again = await runInProcess(['publish', '--token', pat], { cwd: root, env });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('is already published');
    expect((await runInProcess(['publish', '--token', pat, '--skip-existing'], { cwd: root, env })).code).toBe(0);
  });

  it('publisher create elsewhere: the hint gives --publisher first, then the key to set', async () => {
    const created = await runInProcess(['publisher', 'create', 'bea'], {
      cwd: tempDir(),
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: ada.token },
    });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain(
      'hint: publish with `nodereg publish --publisher bea`, or set [tool.nodereg] publisher = "bea" in pyproject.toml',
    );
  });
});

describe('an install.py that runs `pip install -r requirements.txt`, as many nodes the incumbent published have', () => {
  // The comment a migrant adds when the scan's hint offers it: the registry does not honour it for a high finding.
  const INSTALL_PY =
    'import os\nimport subprocess\nimport sys\n\nrequirements = os.path.join(os.path.dirname(__file__), "requirements.txt")\n' +
    '# nodereg: allow runtime-install -- installs our own requirements.txt\nsubprocess.check_call([sys.executable, "-m", "pip", "install", "-r", requirements])\n';

  it('validate and publish stop on it, comment or not (publish went through and the registry flagged the version), and say to drop the call; without it, it publishes', async () => {
    await createPublisher(server, ada, 'cara');
    const root = committedRepo({
      'pyproject.toml': PYPROJECT.replace('PublisherId = "ada"', 'PublisherId = "cara"').replace(
        'comfyui-portrait-relight',
        'comfyui-install-script',
      ),
      LICENSE: 'MIT License\n',
      'requirements.txt': 'numpy>=1.26\n',
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      'install.py': INSTALL_PY,
    });
    const env = { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: await createPat(server, ada, 'cara') };
    const said =
      "hint: fix it: the host installs the node's requirements.txt itself (ComfyUI-Manager does, before it runs install.py): remove this call, or the whole install.py when installing is all it does";
    const comment =
      'a `# nodereg: allow RULE -- reason` comment does not keep a registry from flagging a high or more severe finding';

    const validated = await runInProcess(['validate'], { cwd: root, env });
    expect(validated.code, validated.stderr).toBe(2);
    expect(validated.stderr).toContain(
      'install.py:7  high  runtime-install: subprocess.check_call() runs a package install',
    );
    expect(validated.stderr).toContain(said);
    expect(validated.stderr).toContain(comment);
    const published = await runInProcess(['publish'], { cwd: root, env });
    expect(published.code, published.stderr).toBe(2);
    expect(published.stderr).toContain(said);
    expect(published.stderr).toContain(
      'or publish anyway with --accept-findings (the registry flags the version: nobody can install it until an admin reviews it)',
    );
    expect((await fetch(`${server.url}/nodes/comfyui-install-script`)).status).toBe(404);
    // scan honours the comment, and says what the registry will do
    const scanned = await runInProcess(['scan'], { cwd: root });
    expect(scanned.code, scanned.stderr).toBe(0);
    expect(scanned.stdout).toContain(
      '1 suppressed (a registry flags it anyway: a comment hides no high or more severe finding there)',
    );

    git(root, ['rm', '-q', 'install.py']);
    commitAll(root);
    const fixed = await runInProcess(['publish', '--json'], { cwd: root, env });
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({
      node_id: 'comfyui-install-script',
      status: 'NodeVersionStatusActive',
    });
  });
});

describe('a vendored JavaScript library', () => {
  it('its `new Function` is a high finding whose hint speaks of the library, not only of calling the code directly', async () => {
    const root = committedRepo({
      'pyproject.toml': PYPROJECT,
      'web/lib/template.min.js': '!function(e){var t=new Function("d","return "+e.body);window.T=t}({body:"d.x"});\n',
    });
    const scanned = await runInProcess(['scan'], { cwd: root });
    expect(scanned.code).toBe(1);
    expect(scanned.stdout).toContain(
      'hint: call the code directly; parse data with JSON.parse; for a vendored library (web/lib/…min.js), ship a build of it without eval or new Function',
    );
  });
});

describe('every problem at once', () => {
  it('validate lists the scan findings with the manifest problems (it named the empty PublisherId, and the install.py only in a second run)', async () => {
    const root = committedRepo({
      'pyproject.toml': PYPROJECT.replace('PublisherId = "ada"', 'PublisherId = ""'),
      LICENSE: 'MIT License\n',
      'install.py':
        'import subprocess, sys\n\nsubprocess.check_call([sys.executable, "-m", "pip", "install", "-r", "requirements.txt"])\n',
    });
    const validated = await runInProcess(['validate', '--offline'], { cwd: root });
    expect(validated.code, validated.stderr).toBe(2);
    expect(validated.stderr).toContain(
      'error: the project has 2 problems to fix:\n  [tool.comfy] PublisherId: is empty',
    );
    expect(validated.stderr).toContain(
      "\n  scan install.py:3: high runtime-install: subprocess.check_call() runs a package install: -m pip install -r requirements.txt; the host installs the node's requirements.txt itself",
    );
  });
});

describe('the access token of another publisher', () => {
  it('an unknown publisher with an access token: the hint says the token publishes for its own (it offered --create-publisher, which an access token may not do)', async () => {
    await createPublisher(server, ada, 'erin');
    const root = committedRepo({
      'pyproject.toml': PYPROJECT.replace('PublisherId = "ada"', 'PublisherId = "erin-typo"'),
      LICENSE: 'MIT License\n',
    });
    const published = await runInProcess(['publish'], {
      cwd: root,
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: await createPat(server, ada, 'erin') },
    });
    expect(published.code, published.stderr).toBe(5);
    expect(published.stderr).toContain(`error: publisher "erin-typo" does not exist on ${server.url}`);
    expect(published.stderr).toContain(
      'hint: this access token publishes for its own publisher only (`nodereg whoami` names it): give that id with --publisher or in pyproject.toml; to create erin-typo, run `nodereg publisher create erin-typo` with a user token (nrg_u_…)',
    );
    // a user token keeps the hint that works for it
    const withUser = await runInProcess(['publish'], {
      cwd: root,
      env: { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: ada.token },
    });
    expect(withUser.stderr).toContain(
      'hint: create it with `nodereg publisher create erin-typo`, or publish with --create-publisher',
    );
  });
});

describe('files that are not committed', () => {
  it('publish names the untracked files it ships, which the incumbent (git ls-files) left out, but not the built assets `includes` brings in', async () => {
    await createPublisher(server, ada, 'dora');
    const root = committedRepo({
      'pyproject.toml': PYPROJECT.replace('PublisherId = "ada"', 'PublisherId = "dora"')
        .replace('comfyui-portrait-relight', 'comfyui-loose-files')
        .replace('includes = []', 'includes = ["web/dist"]'),
      '.gitignore': 'web/dist/\n',
      LICENSE: 'MIT License\n',
      '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    });
    writeTree(root, { 'notes.txt': 'todo: ask Bea\n', 'web/dist/app.js': 'console.log(1)\n' });
    const env = { NODEREG_REGISTRY: server.url, NODEREG_TOKEN: await createPat(server, ada, 'dora') };
    const published = await runInProcess(['publish', '--json'], { cwd: root, env });
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ node_id: 'comfyui-loose-files', files: 6 });
    expect(published.stderr).toContain(
      'warning: 1 file that git does not track ships (the incumbent client packed only committed files): notes.txt; commit it, or ignore it in .gitignore (`nodereg pack --list` marks each)',
    );
    expect(published.stderr).not.toContain('web/dist');
  });
});

describe('run from a subdirectory of the repository', () => {
  it('validate, pack and publish --dry-run use the nearest pyproject.toml above, and say so', async () => {
    const root = repo();
    const sub = join(root, 'web', 'js');
    const validated = await runInProcess(['validate', '--offline'], { cwd: sub });
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stderr).toContain(`using the project in ${root} (no pyproject.toml here; the nearest one above)`);
    expect(validated.stdout).toContain('comfyui-portrait-relight 1.0.0 (publisher ada)');

    const dry = await runInProcess(['publish', '--dry-run', '--json'], { cwd: join(root, 'nodes') });
    expect(dry.code, dry.stderr).toBe(0);
    const doc = JSON.parse(dry.stdout);
    expect(doc.file_list.map((f: { path: string }) => f.path)).toEqual(
      expect.arrayContaining(['__init__.py', 'nodes/relight.py', 'pyproject.toml', 'web/js/relight.js']),
    );

    const packed = await runInProcess(['pack'], { cwd: sub });
    expect(packed.code, packed.stderr).toBe(0);
    expect(existsSync(join(sub, 'comfyui-portrait-relight-1.0.0.zip'))).toBe(true); // where pack was run, as README says
  });

  it('init adds to the nearest pyproject.toml above, as validate would read it, and says so; `init .` makes one here', async () => {
    const root = repo();
    const nodes = join(root, 'nodes');
    const before = readFileSync(join(root, 'pyproject.toml'), 'utf8');
    const added = await runInProcess(['init', '--tags', 'image', '--no-input'], { cwd: nodes });
    expect(added.code, added.stderr).toBe(0);
    expect(added.stderr).toContain(
      `using the project in ${root} (no pyproject.toml here; the nearest one above); \`nodereg init .\` creates one here instead`,
    );
    expect(added.stdout).toContain(`added ${join(root, 'pyproject.toml')}: [tool.nodereg] tags`);
    expect(existsSync(join(nodes, 'pyproject.toml'))).toBe(false);
    expect(readFileSync(join(root, 'pyproject.toml'), 'utf8')).toBe(`${before}\n[tool.nodereg]\ntags = [ "image" ]\n`);
    const validated = await runInProcess(['validate', '--offline', '--json'], { cwd: nodes });
    expect(validated.code, validated.stderr).toBe(0);
    expect(JSON.parse(validated.stdout).keys).toMatchObject({ 'node.tags': '[tool.nodereg] tags' });

    const here = await runInProcess(['init', '.', '--publisher', 'ada', '--no-input'], { cwd: nodes });
    expect(here.code, here.stderr).toBe(0);
    expect(here.stderr).not.toContain('using the project in');
    expect(existsSync(join(nodes, 'pyproject.toml'))).toBe(true);

    // outside git nothing above is taken, as for validate
    const plain = writeTree(tempDir(), { 'pyproject.toml': PYPROJECT, 'nodes/relight.py': '' });
    const outside = await runInProcess(['init', '--publisher', 'ada', '--no-input'], { cwd: join(plain, 'nodes') });
    expect(outside.code, outside.stderr).toBe(0);
    expect(existsSync(join(plain, 'nodes', 'pyproject.toml'))).toBe(true);
    expect(readFileSync(join(plain, 'pyproject.toml'), 'utf8')).toBe(PYPROJECT);
  });

  it('outside a git work tree, or beyond its root, no pyproject.toml above is taken', async () => {
    const plain = writeTree(tempDir(), { 'pyproject.toml': PYPROJECT, 'nodes/relight.py': '' });
    const outside = await runInProcess(['validate', '--offline'], { cwd: join(plain, 'nodes') });
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain(`pyproject.toml: not found in ${join(plain, 'nodes')}`);

    // a repository inside a directory that has a pyproject.toml: the search stops at the repository's root
    const root = repo();
    const inner = committedRepo({ 'README.md': '# inner\n', 'src/a.py': '' });
    const nested = join(root, 'vendor');
    mkdirSync(nested);
    const moved = join(nested, 'inner');
    renameSync(inner, moved);
    const beyond = await runInProcess(['validate', '--offline'], { cwd: join(moved, 'src') });
    expect(beyond.code).toBe(2);
    expect(beyond.stderr).toContain(`pyproject.toml: not found in ${join(moved, 'src')}`);
  });
});

describe('a registry URL written without its scheme (in-process)', () => {
  it.each([
    ['127.0.0.1:4911/', 'http://127.0.0.1:4911/'],
    ['localhost', 'http://localhost'],
    ['registry.example.com', 'https://registry.example.com'],
    // http only for a registry of one's own: a public host with a port most often speaks TLS
    ['registry.example.com:8443/api', 'https://registry.example.com:8443/api'],
    ['registry.example.com:8080', 'https://registry.example.com:8080'],
    ['203.0.113.7:8080', 'https://203.0.113.7:8080'],
    ['registry.example.com:4880', 'http://registry.example.com:4880'],
    ['192.168.1.20:8080', 'http://192.168.1.20:8080'],
    ['10.0.0.5', 'http://10.0.0.5'],
    ['172.20.0.3:9000', 'http://172.20.0.3:9000'],
    ['172.32.0.3:9000', 'https://172.32.0.3:9000'],
    ['[::1]:4911', 'http://[::1]:4911'],
    ['registry.localhost:8080', 'http://registry.localhost:8080'],
  ])('%s: exit 2, the hint writes it whole as %s', async (typed, whole) => {
    const result = await runInProcess(['node', 'show', 'x', '--registry', typed]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `error: --registry "${typed}" is not an http:// or https:// URL\nhint: write it whole, such as ${whole}\n`,
    );
  });
});

describe('https:// for a registry that speaks http (in-process)', () => {
  it('exit 1, and the hint gives the http:// URL to write instead of "is the registry running?"', async () => {
    const typed = server.url.replace('http:', 'https:');
    const result = await runInProcess(['node', 'show', 'x', '--registry', `${typed}/`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `hint: the server there speaks http, not https (as \`nodereg serve\` does): write ${server.url} in --registry or NODEREG_REGISTRY\n`,
    );
  });
});

describe('a profile token for another spelling of the registry (in-process)', () => {
  it('localhost for 127.0.0.1: exit 4, the hint says the profile holds a token for the URL it was saved for', async () => {
    const home = tempDir('nodereg-home-');
    const login = await runInProcess(['login', '--no-input', '--registry', server.url], {
      home,
      input: `${ada.token}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    const other = server.url.replace('127.0.0.1', 'localhost');
    const result = await runInProcess(['whoami'], { home, env: { NODEREG_REGISTRY: other } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(
      `error: no token for ${other}\nhint: profile "default" holds a token for ${server.url}, which is only sent there: use that URL, or set NODEREG_TOKEN=<token>, pass --token <token>, or run \`nodereg login --registry ${other}\``,
    );
    expect(result.stderr).not.toContain(ada.token);
  });
});
