// Real custom-node repositories, rebuilt as a publisher has them: each manifest is the project's own
// pyproject.toml (or ignore file) as published on GitHub, named above its test; the other files are
// made up, with the repository's names. Each test is a gap those repositories showed.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProject } from '../../src/package/project.js';
import { tempDir } from '../helpers.js';
import { commitAll, git, gitRepo } from './fixtures.js';
import { ULTIMATE_SD_UPSCALE } from './real-manifests.js';

const paths = (project: { files: { path: string }[] }) => project.files.map((f) => f.path);

describe('real repositories', () => {
  // ssitu/ComfyUI_UltimateSDUpscale, pyproject.toml: the upscaler script is a git submodule
  // (repositories/ultimate_sd_upscale) that `includes` names; a checkout without submodules
  // (actions/checkout's default) has the directory empty.
  function ultimateSdUpscale(): string {
    const script = commitAll(gitRepo({ 'scripts/ultimate-upscale.py': 'x = 1\n', LICENSE: 'GPL-3.0\n' }));
    const root = gitRepo({
      'pyproject.toml': ULTIMATE_SD_UPSCALE,
      LICENSE: 'GPL-3.0\n',
      '__init__.py': '',
      'nodes.py': '',
      'repositories/__init__.py': '',
    });
    git(root, [
      '-c',
      'protocol.file.allow=always',
      'submodule',
      'add',
      '-q',
      script,
      'repositories/ultimate_sd_upscale',
    ]);
    return commitAll(root);
  }

  it('ships a checked-out submodule that includes names (ssitu/ComfyUI_UltimateSDUpscale)', async () => {
    const project = await loadProject(ultimateSdUpscale());
    expect(project.problems).toEqual([]);
    expect(paths(project)).toContain('repositories/ultimate_sd_upscale/scripts/ultimate-upscale.py');
    expect(project.warnings).toEqual([]);
  });

  it('warns when a submodule is not checked out, as in a clone without --recurse-submodules (ssitu/ComfyUI_UltimateSDUpscale)', async () => {
    const clone = join(tempDir(), 'clone');
    git(ultimateSdUpscale(), ['clone', '-q', '.', clone]);
    const project = await loadProject(clone);
    expect(paths(project)).not.toContain('repositories/ultimate_sd_upscale/scripts/ultimate-upscale.py');
    expect(project.warnings).toEqual([
      'repositories/ultimate_sd_upscale is a git submodule that is not checked out, so none of its files are in the archive: run `git submodule update --init --recursive` before packing (in GitHub Actions: actions/checkout with `submodules: recursive`)',
    ]);
    rmSync(clone, { recursive: true, force: true });
  });

  // 11cafe/comfyui-workspace-manager, pyproject.toml: the incumbent's `comfy node init` template, with
  // PublisherId left "".
  const WORKSPACE_MANAGER = `[project]
name = "comfyui-workspace-manager"
description = "A ComfyUI custom node for project management to centralize the management of all your workflows in one place. Seamlessly switch between workflows, create and update them within a single workspace, like Google Docs."
version = "1.0.0"
license = "LICENSE"

[project.urls]
Repository = "https://github.com/11cafe/comfyui-workspace-manager"

[tool.comfy]
PublisherId = ""
DisplayName = "comfyui-workspace-manager"
Icon = ""
Models = [{location = "/checkpoints/model.safetensor", model_url = "https://example.com/model.zip"}]
`;

  it('names the empty PublisherId the publisher has, not a key to add (11cafe/comfyui-workspace-manager)', async () => {
    const root = commitAll(gitRepo({ 'pyproject.toml': WORKSPACE_MANAGER, LICENSE: 'GPL-3.0\n', '__init__.py': '' }));
    const project = await loadProject(root, { requirePublisher: true });
    expect(project.problems).toEqual([
      {
        key: '[tool.comfy] PublisherId',
        message: 'is empty: set it to your publisher id (PublisherId = "your-publisher-id"), or pass --publisher',
      },
    ]);
    expect((await loadProject(root, { requirePublisher: true, publisher: 'cafe' })).request?.body.node.license).toBe(
      'LICENSE',
    );
  });
});
