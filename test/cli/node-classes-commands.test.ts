// The node classes on the CLI: `validate` prints the classes it finds (and warns of a version the
// host's manager cannot read), `node show --classes` lists them from the registry, and `workflow deps`
// resolves a workflow's classes (UI and API format) against a registry holding three packs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { writeTree } from '../package/fixtures.js';
import { createPat, createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';
import { runInProcess } from './in-process.js';

const initPy = (classes: string[]) =>
  classes
    .map((c) => `class ${c}:\n    RETURN_TYPES = ("IMAGE",)\n    FUNCTION = "run"\n    CATEGORY = "test"\n`)
    .join('\n') + `\nNODE_CLASS_MAPPINGS = {${classes.map((c) => `"${c}": ${c}`).join(', ')}}\n`;

const PACKS: Record<string, string[]> = {
  'pack-blur': ['BoxBlur', 'GaussBlur'],
  'pack-color': ['HueShift'],
  'pack-text': ['TextOverlay'],
};

describe('node classes on the CLI', () => {
  let server: TestServer;
  const cli = (argv: string[]) => runInProcess(['--registry', server.url, ...argv]);

  beforeAll(async () => {
    server = await startServer();
    const owner = await createUser(server);
    await createPublisher(server, owner, 'cls');
    const pat = await createPat(server, owner, 'cls');
    for (const [id, classes] of Object.entries(PACKS)) {
      await publishAndUpload(server, pat, 'cls', id, '1.0.0', {}, await makeZip({ '__init__.py': initPy(classes) }));
    }
  });
  afterAll(() => server.close());

  it('validate prints the classes it finds, and --json includes them', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "my-node"\nversion = "1.0.0"\n[tool.nodereg]\npublisher = "cls"\n',
      '__init__.py': initPy(['Alpha', 'Beta']),
    });
    const human = await cli(['validate', dir, '--offline']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/node classes \(2\):\n {2}Alpha\n {2}Beta/);
    const json = await cli(['--json', 'validate', dir, '--offline']);
    expect(JSON.parse(json.stdout).node_classes).toMatchObject({
      status: 'success',
      classes: [{ name: 'Alpha' }, { name: 'Beta' }],
    });
  });

  it('validate warns when the version is not plain X.Y.Z, saying the manager shows "unknown"', async () => {
    const dir = writeTree(tempDir(), {
      'pyproject.toml': '[project]\nname = "my-node"\nversion = "1.4.0rc1"\n[tool.nodereg]\npublisher = "cls"\n',
      '__init__.py': '',
    });
    const result = await cli(['validate', dir, '--offline']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('is not plain X.Y.Z');
    expect(result.stderr).toContain('"unknown"');
    expect(result.stdout).toContain('node classes: none found (invalid_format');
  });

  it('node show --classes lists the classes of the latest version', async () => {
    const result = await cli(['node', 'show', 'pack-blur', '--classes']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/node classes of 1\.0\.0 \(2\):\n {2}BoxBlur\n {2}GaussBlur/);
    const json = JSON.parse((await cli(['--json', 'node', 'show', 'pack-color', '--classes'])).stdout);
    expect(json.classes.map((c: { comfy_node_name: string }) => c.comfy_node_name)).toEqual(['HueShift']);
  });

  it('workflow deps resolves a UI-format workflow: packs, unknown classes, core classes', async () => {
    const file = join(tempDir(), 'ui.json');
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [
          { id: 1, type: 'CheckpointLoaderSimple', properties: {} },
          { id: 2, type: 'GaussBlur', properties: {} },
          { id: 3, type: 'BoxBlur', properties: {} },
          { id: 4, type: 'HueShift', properties: {} },
          { id: 5, type: 'Mystery', properties: {} },
          { id: 6, type: 'VeryOwnCoreThing', properties: { cnr_id: 'comfy-core' } },
          { id: 7, type: 'Note', properties: {} },
        ],
        links: [],
      }),
    );
    const result = await cli(['--json', 'workflow', 'deps', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      format: 'ui',
      packs: [
        { id: 'pack-blur', classes: ['BoxBlur', 'GaussBlur'] },
        { id: 'pack-color', classes: ['HueShift'] },
      ],
      unknown: ['Mystery'],
      core: ['CheckpointLoaderSimple', 'VeryOwnCoreThing'],
    });
    const human = await cli(['workflow', 'deps', file]);
    expect(human.stdout).toContain('packs to install (2):\n  pack-blur: BoxBlur, GaussBlur\n  pack-color: HueShift');
    expect(human.stdout).toContain('classes no pack in the registry defines (1): Mystery');
  });

  it('workflow deps reads an API-format workflow too', async () => {
    const file = join(tempDir(), 'api.json');
    writeFileSync(
      file,
      JSON.stringify({
        '3': { class_type: 'KSampler', inputs: {} },
        '4': { class_type: 'TextOverlay', inputs: {} },
        '5': { class_type: 'SaveImage', inputs: {} },
      }),
    );
    const result = await cli(['--json', 'workflow', 'deps', file]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      format: 'api',
      packs: [{ id: 'pack-text', classes: ['TextOverlay'] }],
      unknown: [],
      core: ['KSampler', 'SaveImage'],
    });
  });

  it('workflow deps names a file that is not a workflow, exit 2', async () => {
    const file = join(tempDir(), 'bad.json');
    writeFileSync(file, '{ nope');
    const result = await cli(['workflow', 'deps', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not JSON');
  });
});
