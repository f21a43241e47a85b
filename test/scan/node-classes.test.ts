// Static node-class extraction: packages written by the test in each style the host application
// loads, with the class lists they must give, and the packages that must fail or be refused.
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { Language, Parser } from 'web-tree-sitter';
import { extractNodeClasses } from '../../src/scan/node-classes/extract.js';
import type { ParsePython } from '../../src/scan/node-classes/package-modules.js';

const require = createRequire(import.meta.url);
let parse: ParsePython;

beforeAll(async () => {
  await Parser.init({ locateFile: () => require.resolve('web-tree-sitter/web-tree-sitter.wasm') });
  const parser = new Parser();
  parser.setLanguage(await Language.load(require.resolve('tree-sitter-python/tree-sitter-python.wasm')));
  parse = (text) => parser.parse(text);
});

const extract = (files: Record<string, string>, name = 'mypack') =>
  extractNodeClasses(new Map(Object.entries(files)), parse, name);
const names = (files: Record<string, string>) =>
  extract(files)
    .classes.map((found) => found.name)
    .sort();

const invert = `
class Invert:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"image": ("IMAGE",), "mode": (["fast", "exact"], {"default": "fast"})},
                "optional": {"strength": ("FLOAT", {"default": 1.0})}}
    RETURN_TYPES = ("IMAGE", "MASK")
    RETURN_NAMES = ("image", "mask")
    OUTPUT_IS_LIST = (False, True)
    FUNCTION = "run"
    CATEGORY = "image/filters"
    DESCRIPTION = "Inverts an image"
    OUTPUT_NODE = True
    DEPRECATED = False
    EXPERIMENTAL = True

    def run(self, image, mode, strength=1.0):
        return (1 - image, None)
`;

describe('NODE_CLASS_MAPPINGS', () => {
  it('reads a dict literal in __init__.py with its display names and every class field', () => {
    const result = extract({
      '__init__.py': `${invert}\nNODE_CLASS_MAPPINGS = {"Invert Image": Invert}\nNODE_DISPLAY_NAME_MAPPINGS = {"Invert Image": "Invert (fast)"}\n`,
    });
    expect(result).toEqual({
      status: 'success',
      reason: '',
      classes: [
        {
          name: 'Invert Image',
          displayName: 'Invert (fast)',
          category: 'image/filters',
          description: 'Inverts an image',
          function: 'run',
          returnTypes: ['IMAGE', 'MASK'],
          returnNames: ['image', 'mask'],
          outputIsList: [false, true],
          outputNode: true,
          deprecated: false,
          experimental: true,
          inputs: { required: { image: 'IMAGE', mode: 'COMBO' }, optional: { strength: 'FLOAT' } },
        },
      ],
    });
  });

  it('follows relative imports, .update(), subscript writes, merges and star imports', () => {
    const files = {
      '__init__.py': [
        'from .nodes import NODE_CLASS_MAPPINGS as BASE',
        'from .more.extra import EXTRA_MAPPINGS',
        'from . import tools',
        'from .star import *',
        'NODE_CLASS_MAPPINGS = {**BASE, **EXTRA_MAPPINGS}',
        'NODE_CLASS_MAPPINGS.update({"Tool": tools.Tool})',
        'NODE_CLASS_MAPPINGS["Starred"] = Starred',
        'NODE_CLASS_MAPPINGS |= STAR_MAPPINGS',
      ].join('\n'),
      'nodes.py': `${invert}\nNODE_CLASS_MAPPINGS = {"Invert": Invert}\n`,
      'more/__init__.py': '',
      'more/extra.py':
        'from ..nodes import Invert\nclass Blur(Invert):\n    FUNCTION = "blur"\nEXTRA_MAPPINGS = dict(Blur=Blur)\n',
      'tools.py': 'class Tool:\n    CATEGORY = "tools"\n',
      'star.py':
        'class Starred:\n    RETURN_TYPES = ("INT",)\nclass Other:\n    pass\nSTAR_MAPPINGS = {"Other": Other}\n',
    };
    expect(names(files)).toEqual(['Blur', 'Invert', 'Other', 'Starred', 'Tool']);
    const blur = extract(files).classes.find((found) => found.name === 'Blur');
    // inherited from the package's own base class, with its own FUNCTION winning
    expect(blur).toMatchObject({ function: 'blur', category: 'image/filters', returnTypes: ['IMAGE', 'MASK'] });
    expect(extract(files).classes.find((found) => found.name === 'Tool')?.category).toBe('tools');
  });

  it('reads the package imported by its own name and merged with |', () => {
    const files = {
      '__init__.py': 'from mypack.a import A_MAP\nfrom mypack.b import B_MAP\nNODE_CLASS_MAPPINGS = A_MAP | B_MAP\n',
      'a.py': 'class A:\n    pass\nA_MAP = {"A": A}\n',
      'b.py': 'class B:\n    pass\nB_MAP = {"B": B}\n',
    };
    expect(names(files)).toEqual(['A', 'B']);
  });

  it('keeps a mapped name whose class comes from outside the package, with empty fields', () => {
    const result = extract({ '__init__.py': 'from somelib import Node\nNODE_CLASS_MAPPINGS = {"Outside": Node}\n' });
    expect(result.status).toBe('success');
    expect(result.classes).toMatchObject([{ name: 'Outside', category: '', returnTypes: [] }]);
  });
});

describe('the schema style', () => {
  it('reads comfy_entrypoint → extension → get_node_list → define_schema', () => {
    const files = {
      '__init__.py': [
        'from comfy_api.latest import ComfyExtension, io',
        'from .v3 import Sharpen',
        'class MyExtension(ComfyExtension):',
        '    async def get_node_list(self) -> list[type[io.ComfyNode]]:',
        '        return [Sharpen]',
        'async def comfy_entrypoint() -> MyExtension:',
        '    return MyExtension()',
      ].join('\n'),
      'v3.py': [
        'from comfy_api.latest import io',
        'class Sharpen(io.ComfyNode):',
        '    @classmethod',
        '    def define_schema(cls):',
        '        return io.Schema(',
        '            node_id="SharpenV3", display_name="Sharpen", category="image", description="Sharpens",',
        '            inputs=[io.Image.Input("image"), io.Float.Input("amount", optional=True), io.ClipVision.Input("vision")],',
        '            outputs=[io.Image.Output(display_name="sharpened"), io.Custom("MY_TYPE").Output()],',
        '            is_output_node=True, is_experimental=True,',
        '        )',
        '    @classmethod',
        '    def execute(cls, image, amount=1.0):',
        '        return io.NodeOutput(image)',
      ].join('\n'),
    };
    expect(extract(files).classes).toEqual([
      {
        name: 'SharpenV3',
        displayName: 'Sharpen',
        category: 'image',
        description: 'Sharpens',
        function: 'execute',
        returnTypes: ['IMAGE', 'MY_TYPE'],
        returnNames: ['sharpened', ''],
        outputIsList: [false, false],
        outputNode: true,
        deprecated: false,
        experimental: true,
        inputs: { required: { image: 'IMAGE', vision: 'CLIP_VISION' }, optional: { amount: 'FLOAT' } },
      },
    ]);
  });
});

describe('status', () => {
  it('is failed, with the line, when __init__.py does not parse', () => {
    const result = extract({ '__init__.py': 'NODE_CLASS_MAPPINGS = {"A": A\n\ndef broken(:\n' });
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/__init__\.py does not parse as Python \(line \d+\)/);
    expect(result.classes).toEqual([]);
  });

  it('is invalid_format when there is no __init__.py, or it defines no mappings', () => {
    expect(extract({ 'nodes.py': 'x = 1' })).toMatchObject({
      status: 'invalid_format',
      reason: expect.stringContaining('no __init__.py'),
    });
    expect(extract({ '__init__.py': 'WEB_DIRECTORY = "./web"\n' })).toMatchObject({
      status: 'invalid_format',
      reason: expect.stringContaining('neither NODE_CLASS_MAPPINGS nor comfy_entrypoint'),
    });
    expect(extract({ '__init__.py': 'NODE_CLASS_MAPPINGS = build()\n' }).status).toBe('invalid_format');
  });

  it('is failed, not a hang, on mappings that import each other in a circle', () => {
    const result = extract({
      '__init__.py': 'from .a import M\nNODE_CLASS_MAPPINGS = M\n',
      'a.py': 'from .b import M\n',
      'b.py': 'from .a import M\n',
    });
    expect(result.status).toBe('failed');
    expect(result.reason).toMatch(/not fully read/);
  });

  it('never runs the code: a mapping built by a call at import is not read', () => {
    const result = extract({
      '__init__.py': 'import os\nos.system("touch /tmp/ran")\nNODE_CLASS_MAPPINGS = {"A": A}\n',
    });
    expect(result.classes.map((found) => found.name)).toEqual(['A']);
  });
});
