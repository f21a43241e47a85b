// Real custom-node repositories published as their publishers would: the spawned binary, `publish
// --create-publisher` to a real registry on 127.0.0.1, then `node show` and `node download`. The
// manifests and ignore files are the projects' own (repository and path above each); the other files
// are made up, with the repository's names.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServer, tempDir, type TestServer } from '../helpers.js';
import { commitAll, gitRepo, writeTree } from '../package/fixtures.js';
import { ULTIMATE_SD_UPSCALE } from '../package/real-manifests.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const cli = (args: string[]) => runCli(['--registry', server.url, '--token', server.adminToken, ...args]);
const unzipList = (zip: string) => execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).split('\n').filter(Boolean).sort();

// WASasquatch/was-node-suite-comfyui, pyproject.toml: Icon, Banner and requires-comfyui under [tool.comfy].
const WAS_NODE_SUITE = `[project]
name = "was-node-suite-comfyui"
description = "WAS-NS reborn; Tools for image processing, filters, masking, text, logic, numbers, latents, files, 3D scenes, and animation."
version = "3.2.13"
license = { file = "LICENSE" }
requires-python = ">=3.10"

dependencies = []

[project.optional-dependencies]
document_export = ["python-docx", "odfdo", "xhtml2pdf"]  # .docx, .odt and .pdf on Save DOC
all = [
    "python-docx",
    "odfdo",
    "xhtml2pdf",
]

[project.urls]
Repository = "https://github.com/WASasquatch/was-node-suite-comfyui"

[tool.open_manager]
capabilities = ["filesystem", "network", "environment", "models", "dynamic_code"]
branch = "main"
docs = "https://github.com/WASasquatch/was-node-suite-comfyui/blob/main/NODES.md"
funding = "https://paypal.me/ThompsonJordan?country.x=US&locale.x=en_US"
release_note = """
Nothing here starts a process, installs a package or ships a binary. A feature group that needs
a library names it in the log with the pip command to run; install it yourself with
requirements/<group>.txt.

Outbound traffic is huggingface_hub fetching model weights, and only while features.network is
on. A view extension installed by hand is imported as python, and a Three.js scene may carry
browser javascript while threejs.allow_scripts is on. Both of those settings are off by default.
"""
themes = ["themes/was-node-suite-dark/was-node-suite.json", "themes/was-node-suite-light/was-node-suite.json"]
example_workflows = [
    "docs/workflows/*.json",
]

[tool.comfy]
PublisherId = "was"
DisplayName = "WAS Node Suite v3"
Icon = "https://raw.githubusercontent.com/WASasquatch/was-node-suite-comfyui/main/was-node-suite-icon.png"
Banner = "https://raw.githubusercontent.com/WASasquatch/was-node-suite-comfyui/main/was-node-suite-banner.jpg"
web = "web"
requires-comfyui = ">=0.14.0"
`;

// DonutsDelivery/ComfyUI-DonutNodes: pyproject.toml (includes) and .comfyignore.
const DONUT_NODES = `[project]
name = "donutnodes"
description = "Block-weighted LoRA stacking with CivitAI metadata, hash resolution, and browser integration; Donut Detailer for per-block model tuning; TeaCache acceleration; tiled upscaling; CFG sampling with 18 curve types; and reference-based spectral sharpening."
version = "3.0.29"
license = {file = "LICENSE"}

[project.urls]
Repository = "https://github.com/DonutsDelivery/ComfyUI-DonutNodes"
#  Used by Comfy Registry https://comfyregistry.org

[tool.comfy]
PublisherId = "donutsdelivery"
DisplayName = "ComfyUI-DonutNodes"
Icon = ""
includes = ["assets/uncensorfix.f32", "assets/README.md", "model_sources.json", "docs/model-sources.md"]
`;
const DONUT_COMFYIGNORE = `# User data and credentials (also excluded when packaging outside Git)
civitai_cache/
config.yaml
.env
.env.*
.comfy-registry.env

# Local state, environments, and generated artifacts
.git/
.github/
.agents/
.codex/
.claude/
.beads/
.tracking
HERMES.md
.idea/
.vscode/
.venv/
venv/
__pycache__/
*.py[cod]
.pytest_cache/
.ruff_cache/
.mypy_cache/
.coverage*
htmlcov/
/node.zip
/dist/
/build/
*.egg-info/
.DS_Store

# Development tests and validation reports
/test_*.py
/*_test.py
/tests/
/tools/
/distribution/
/docs/validation/
/docs/publishing.md
/AGENTS.md
/analyze_strength_distribution.py
/cache_invalidation_validation.py
/debug_cache_invalidation_issue.py
/debug_merge_strength_flow.py
/detailed_strength_analysis.py

# Automatic downloader remains excluded: its network/environment operations were flagged
/donut_model_downloads.py
`;

// Kosinkadink/ComfyUI-VideoHelperSuite, pyproject.toml.
const VIDEO_HELPER_SUITE = `[project]
name = "comfyui-videohelpersuite"
description = "Nodes related to video workflows"
version = "1.2.2"
license = "LICENSE"
dependencies = ["opencv-python", "imageio-ffmpeg"]

[project.urls]
Repository = "https://github.com/Kosinkadink/ComfyUI-VideoHelperSuite"

#  Used by Comfy Registry https://comfyregistry.org
[tool.comfy]
PublisherId = "kosinkadink"
DisplayName = "ComfyUI-VideoHelperSuite"
Icon = ""
`;

describe('real repositories, published and shown', () => {
  it('shows the icon, banner and app requirement that [tool.comfy] sets (WASasquatch/was-node-suite-comfyui)', async () => {
    const root = commitAll(gitRepo({ 'pyproject.toml': WAS_NODE_SUITE, LICENSE: 'MIT\n', '__init__.py': '', 'web/js/was.js': '', 'requirements/docs.txt': 'python-docx\n' }));
    const published = await cli(['publish', '--create-publisher', root]);
    expect(published.stderr).toContain('created publisher was');
    expect(published.code).toBe(0);
    const shown = await cli(['node', 'show', 'was-node-suite-comfyui']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('WAS Node Suite v3 (was-node-suite-comfyui)  active');
    expect(shown.stdout).toMatch(/^icon: +https:\/\/raw\.githubusercontent\.com\/WASasquatch\/was-node-suite-comfyui\/main\/was-node-suite-icon\.png$/m);
    expect(shown.stdout).toMatch(/^banner: +https:\/\/raw\.githubusercontent\.com\/WASasquatch\/was-node-suite-comfyui\/main\/was-node-suite-banner\.jpg$/m);
    expect(shown.stdout).toMatch(/^requires app: +>=0\.14\.0$/m);
  });

  it('ships the committed files .comfyignore keeps and the includes, never the secrets beside them (DonutsDelivery/ComfyUI-DonutNodes)', async () => {
    const root = gitRepo({
      'pyproject.toml': DONUT_NODES, '.comfyignore': DONUT_COMFYIGNORE,
      LICENSE: 'MIT\n', 'README.md': '', '__init__.py': '', 'DonutDetailer.py': '', 'AGENTS.md': '',
      'assets/README.md': '', 'assets/uncensorfix.f32': Buffer.alloc(4096, 1), 'model_sources.json': '{}',
      'docs/model-sources.md': '', 'docs/publishing.md': '', 'docs/validation/report.md': '',
      'distribution/manual/DonutNodes-model-installer.zip': Buffer.alloc(2048), 'tests/test_lora.py': '', 'tools/check.py': '',
      '.github/workflows/publish.yml': '', '.claude/CLAUDE.md': '', 'HERMES.md': '',
    });
    commitAll(root);
    writeTree(root, { 'config.yaml': 'civitai_api_key: secret\n', '.env': 'TOKEN=x\n', '.env.example': 'TOKEN=\n', 'civitai_cache/a.json': '{}' });

    const published = await cli(['publish', '--create-publisher', root]);
    expect(published.code).toBe(0);
    expect(published.stderr).not.toContain('warning');
    const out = join(tempDir(), 'donut.zip');
    expect((await cli(['node', 'download', 'donutnodes@3.0.29', '--out', out])).code).toBe(0);
    expect(unzipList(out)).toEqual([
      '.comfyignore', 'DonutDetailer.py', 'LICENSE', 'README.md', '__init__.py',
      'assets/README.md', 'assets/uncensorfix.f32', 'docs/model-sources.md', 'model_sources.json', 'pyproject.toml',
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
    for (const query of ['video helper suite', 'helper', 'VideoHelper', 'ComfyUI-VideoHelperSuite', 'comfyui-videohelpersuite']) {
      expect(await found(query), query).toEqual(['comfyui-videohelpersuite']);
    }
    for (const query of ['ultimate sd upscale', 'SDUpscale', 'upscale', 'ComfyUI_UltimateSDUpscale', 'comfyui_ultimatesdupscale']) {
      expect(await found(query), query).toEqual(['comfyui_ultimatesdupscale']);
    }
    expect(await found('comfyui')).toEqual(expect.arrayContaining(['comfyui-videohelpersuite', 'comfyui_ultimatesdupscale']));
  });
});
