// Real custom-node repositories published as their publishers would: the CLI in-process, `publish
// --create-publisher` to a real registry on 127.0.0.1, then `node show` and `node download`. The
// manifests and ignore files are the projects' own (test/package/real-manifests.ts names each one's repository and path); the other files
// are made up, with the repository's names.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { commitAll, gitRepo, writeTree } from '../package/fixtures.js';
import {
  DONUT_COMFYIGNORE,
  DONUT_NODES,
  ULTIMATE_SD_UPSCALE,
  VIDEO_HELPER_SUITE,
  WAS_NODE_SUITE,
} from '../package/real-manifests.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const cli = (args: string[]) => runInProcess(['--registry', server.url, '--token', server.adminToken, ...args]);
const unzipList = (zip: string) =>
  execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).split('\n').filter(Boolean).sort();

describe('real repositories, published and shown', () => {
  it('shows the icon, banner and app requirement that [tool.comfy] sets (WASasquatch/was-node-suite-comfyui)', async () => {
    const root = commitAll(
      gitRepo({
        'pyproject.toml': WAS_NODE_SUITE,
        LICENSE: 'MIT\n',
        '__init__.py': '',
        'web/js/was.js': '',
        'requirements/docs.txt': 'python-docx\n',
      }),
    );
    const published = await cli(['publish', '--create-publisher', root]);
    expect(published.stderr).toContain('created publisher was');
    expect(published.code).toBe(0);
    const shown = await cli(['node', 'show', 'was-node-suite-comfyui']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('WAS Node Suite v3 (was-node-suite-comfyui)  active');
    expect(shown.stdout).toMatch(
      /^icon: +https:\/\/raw\.githubusercontent\.com\/WASasquatch\/was-node-suite-comfyui\/main\/was-node-suite-icon\.png$/m,
    );
    expect(shown.stdout).toMatch(
      /^banner: +https:\/\/raw\.githubusercontent\.com\/WASasquatch\/was-node-suite-comfyui\/main\/was-node-suite-banner\.jpg$/m,
    );
    expect(shown.stdout).toMatch(/^requires app: +>=0\.14\.0$/m);
  });

  it('ships the committed files .comfyignore keeps and the includes, never the secrets beside them (DonutsDelivery/ComfyUI-DonutNodes)', async () => {
    const root = gitRepo({
      'pyproject.toml': DONUT_NODES,
      '.comfyignore': DONUT_COMFYIGNORE,
      LICENSE: 'MIT\n',
      'README.md': '',
      '__init__.py': '',
      'DonutDetailer.py': '',
      'AGENTS.md': '',
      'assets/README.md': '',
      'assets/uncensorfix.f32': Buffer.alloc(4096, 1),
      'model_sources.json': '{}',
      'docs/model-sources.md': '',
      'docs/publishing.md': '',
      'docs/validation/report.md': '',
      'distribution/manual/DonutNodes-model-installer.zip': Buffer.alloc(2048),
      'tests/test_lora.py': '',
      'tools/check.py': '',
      '.github/workflows/publish.yml': '',
      '.claude/CLAUDE.md': '',
      'HERMES.md': '',
    });
    commitAll(root);
    writeTree(root, {
      'config.yaml': 'civitai_api_key: secret\n',
      '.env': 'TOKEN=x\n',
      '.env.example': 'TOKEN=\n',
      'civitai_cache/a.json': '{}',
    });

    const published = await cli(['publish', '--create-publisher', root]);
    expect(published.code).toBe(0);
    expect(published.stderr).not.toContain('warning');
    const out = join(tempDir(), 'donut.zip');
    expect((await cli(['node', 'download', 'donutnodes@3.0.29', '--out', out])).code).toBe(0);
    expect(unzipList(out)).toEqual([
      '.comfyignore',
      'DonutDetailer.py',
      'LICENSE',
      'README.md',
      '__init__.py',
      'assets/README.md',
      'assets/uncensorfix.f32',
      'docs/model-sources.md',
      'model_sources.json',
      'pyproject.toml',
    ]);
  });

  it('finds nodes by the words their joined and CamelCase ids and names hold (Kosinkadink/ComfyUI-VideoHelperSuite, ssitu/ComfyUI_UltimateSDUpscale)', async () => {
    for (const manifest of [VIDEO_HELPER_SUITE, ULTIMATE_SD_UPSCALE]) {
      const root = commitAll(gitRepo({ 'pyproject.toml': manifest, LICENSE: 'GPL-3.0\n', '__init__.py': '' }));
      expect((await cli(['publish', '--create-publisher', root])).code).toBe(0);
    }
    const found = async (query: string) => {
      const result = await cli(['--json', 'node', 'search', query]);
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout).nodes.map((node: { id: string }) => node.id);
    };
    for (const query of [
      'video helper suite',
      'helper',
      'VideoHelper',
      'ComfyUI-VideoHelperSuite',
      'comfyui-videohelpersuite',
    ]) {
      expect(await found(query), query).toEqual(['comfyui-videohelpersuite']);
    }
    for (const query of [
      'ultimate sd upscale',
      'SDUpscale',
      'upscale',
      'ComfyUI_UltimateSDUpscale',
      'comfyui_ultimatesdupscale',
    ]) {
      expect(await found(query), query).toEqual(['comfyui_ultimatesdupscale']);
    }
    expect(await found('comfyui')).toEqual(
      expect.arrayContaining(['comfyui-videohelpersuite', 'comfyui_ultimatesdupscale']),
    );
  });
});
