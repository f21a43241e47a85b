// Reading the node classes of a workflow in both formats the host application saves.
import { describe, expect, it } from 'vitest';
import { WorkflowFormatError, workflowNodeTypes } from '../../src/cli/workflow/node-types.js';

describe('workflowNodeTypes', () => {
  it('reads a UI-format workflow: classes, the core ones it marks, packs it names, subgraphs, frontend-only nodes', () => {
    const subgraph = '4f1c2a9e-0000-4000-8000-000000000001';
    const workflow = {
      last_node_id: 9,
      nodes: [
        { id: 1, type: 'KSampler', properties: { cnr_id: 'comfy-core', ver: '0.3.40' } },
        { id: 2, type: 'ImpactWildcardEncode', properties: { cnr_id: 'comfyui-impact-pack', ver: '8.1.0' } },
        { id: 3, type: 'Note', properties: {} },
        { id: 4, type: subgraph },
        { id: 5, type: 'Reroute' },
        { id: 6, type: 'MyCustomClass', properties: { 'Node name for S&R': 'MyCustomClass' } },
      ],
      links: [],
      definitions: {
        subgraphs: [
          {
            id: subgraph,
            nodes: [
              { id: 1, type: 'InsideSubgraph' },
              { id: 2, type: 'VAEDecode', properties: { cnr_id: 'comfy-core' } },
            ],
          },
        ],
      },
    };
    expect(workflowNodeTypes(workflow)).toEqual({
      format: 'ui',
      classes: ['ImpactWildcardEncode', 'InsideSubgraph', 'KSampler', 'MyCustomClass', 'VAEDecode'],
      markedCore: ['KSampler', 'VAEDecode'],
      markedPacks: { ImpactWildcardEncode: 'comfyui-impact-pack' },
    });
  });

  it('reads an API-format workflow', () => {
    const workflow = {
      '3': { class_type: 'KSampler', inputs: { seed: 1, model: ['4', 0] } },
      '4': { class_type: 'CheckpointLoaderSimple', inputs: { ckpt_name: 'a.safetensors' } },
      '9': { class_type: 'MyCustomClass', inputs: {}, _meta: { title: 'Mine' } },
    };
    expect(workflowNodeTypes(workflow)).toEqual({
      format: 'api',
      classes: ['CheckpointLoaderSimple', 'KSampler', 'MyCustomClass'],
      markedCore: [],
      markedPacks: {},
    });
  });

  it('refuses what is not a workflow, naming the problem', () => {
    expect(() => workflowNodeTypes([])).toThrow(WorkflowFormatError);
    expect(() => workflowNodeTypes({})).toThrow(/no nodes/);
    expect(() => workflowNodeTypes({ '1': { inputs: {} } })).toThrow(/node "1" has no class_type/);
  });
});
