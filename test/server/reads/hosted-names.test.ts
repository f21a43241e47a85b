// Answers carry the hosted registry's field names beside ours, with the same values, and every list a
// client indexes, so that the field's clients read us unchanged (DESIGN.md §12). OpenAPI documents
// both, ours canonical and the hosted ones deprecated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiDocument } from '../../../src/contract/openapi.js';
import { HOST_APP_ALIASES } from '../../../src/contract/resources.js';
import { startServer, type TestServer } from '../../helpers.js';
import { call, createPat, createPublisher, createUser, publishAndUpload } from '../fixtures.js';

describe("the hosted registry's names in answers", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    const owner = await createUser(server);
    await createPublisher(server, owner, 'hn');
    const pat = await createPat(server, owner, 'hn');
    // written with the hosted names, as the incumbent client sends them
    await publishAndUpload(server, pat, 'hn', 'named', '1.0.0', {
      node: { preempted_comfy_node_names: ['KSampler'], supported_comfyui_version: '>=0.3.0' },
      node_version: { supported_comfyui_version: '>=0.3.0', supported_comfyui_frontend_version: '>=1.2.0' },
    });
    await publishAndUpload(server, pat, 'hn', 'bare', '1.0.0');
    await call(server.url, 'PUT', '/publishers/hn/nodes/named', {
      token: server.adminToken,
      body: { github_stars: 7 },
    });
  });
  afterAll(() => server.close());

  it('reads back a version published with supported_comfyui_version under both names', async () => {
    const version = (await call(server.url, 'GET', '/nodes/named/versions/1.0.0')).body;
    expect(version).toMatchObject({
      supported_comfyui_version: '>=0.3.0',
      supported_appui_version: '>=0.3.0',
      supported_comfyui_frontend_version: '>=1.2.0',
      supported_appui_frontend_version: '>=1.2.0',
      comfy_node_extract_status: version.app_node_extract_status,
    });
    const node = (await call(server.url, 'GET', '/nodes/named')).body;
    expect(node).toMatchObject({
      supported_comfyui_version: '>=0.3.0',
      supported_appui_version: '>=0.3.0',
      preempted_comfy_node_names: ['KSampler'],
      preempted_app_node_names: ['KSampler'],
      github_stars: 7,
      repohost_stars: 7,
    });
    expect(node.latest_version.supported_comfyui_version).toBe('>=0.3.0');
  });

  it('gives every alias the value of our name, on every node and version answer', async () => {
    const answers = [
      ...(await call(server.url, 'GET', '/nodes')).body.nodes,
      (await call(server.url, 'GET', '/nodes/bare')).body,
      ...(await call(server.url, 'GET', '/nodes/bare/versions')).body,
      (await call(server.url, 'GET', '/nodes/bare/install')).body,
    ];
    for (const answer of answers) {
      for (const [hosted, ours] of Object.entries(HOST_APP_ALIASES)) {
        if (ours in answer) expect(answer[hosted], `${hosted} of ${answer.id}`).toEqual(answer[ours]);
      }
    }
  });

  it('always carries the keys clients index, "" or [] when unset', async () => {
    const node = (await call(server.url, 'GET', '/nodes/bare')).body;
    expect(node.name).toBe('bare'); // a node's name defaults to its id
    for (const key of [
      'description',
      'author',
      'repository',
      'icon',
      'license',
      'supported_comfyui_version',
      'supported_comfyui_frontend_version',
    ]) {
      expect(node[key], key).toBe('');
    }
    for (const key of ['tags', 'supported_os', 'supported_accelerators', 'preempted_comfy_node_names'])
      expect(node[key], key).toEqual([]);
    const version = node.latest_version;
    for (const key of ['changelog', 'supported_comfyui_version', 'comfy_node_extract_status', 'status_reason'])
      expect(typeof version[key], key).toBe('string');
    for (const key of ['dependencies', 'supported_os', 'supported_accelerators', 'tags'])
      expect(version[key], key).toEqual([]);
    expect(version.deprecated).toBe(false);
  });

  it('documents both names in OpenAPI, the hosted ones deprecated', () => {
    const document = openapiDocument('test') as any;
    const node = document.paths['/nodes/{nodeId}'].get.responses['200'].content['application/json'].schema.properties;
    expect(node.supported_appui_version.deprecated).toBeUndefined();
    expect(node.supported_comfyui_version.deprecated).toBe(true);
    expect(node.github_stars.description).toContain('repohost_stars');
    const version =
      document.paths['/nodes/{nodeId}/versions/{version}'].get.responses['200'].content['application/json'].schema
        .properties;
    expect(version.comfy_node_extract_status.deprecated).toBe(true);
  });
});
