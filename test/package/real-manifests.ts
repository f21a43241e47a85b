// Manifests of real custom-node repositories, as published on GitHub (repository and path above each),
// shared by the tests that rebuild those repositories.

// ssitu/ComfyUI_UltimateSDUpscale, pyproject.toml.
export const ULTIMATE_SD_UPSCALE = `[project]
name = "comfyui_ultimatesdupscale"
description = "ComfyUI nodes for the Ultimate Stable Diffusion Upscale script by Coyote-A."
version = "1.6.4-dev"
license = { file = "LICENSE" }

[project.optional-dependencies]
test = [
    "pytest>=9.0.0",
    "pytest-cov>=7.0.0",
]

[project.urls]
Repository = "https://github.com/ssitu/ComfyUI_UltimateSDUpscale"
#  Used by Comfy Registry https://comfyregistry.org

[tool.comfy]
PublisherId = "ssit"
DisplayName = "ComfyUI_UltimateSDUpscale"
Icon = ""
includes = ["/repositories/ultimate_sd_upscale/"]

[tool.setuptools.packages.find]
where = ["."]
include = ["ComfyUI_UltimateSDUpscale"]
`;

// WASasquatch/was-node-suite-comfyui, pyproject.toml: Icon, Banner and requires-comfyui under [tool.comfy].
export const WAS_NODE_SUITE = `[project]
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
export const DONUT_NODES = `[project]
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

export const DONUT_COMFYIGNORE = `# User data and credentials (also excluded when packaging outside Git)
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
export const VIDEO_HELPER_SUITE = `[project]
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
