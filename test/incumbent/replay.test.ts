// The incumbent client, replayed byte for byte against the real server (DESIGN.md §11): its publish
// body (the PAT in the body only, the host application's field names, "" for unset URLs, its
// license string), short versions, an upload without a checksum header, and the reads it indexes.
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiDocument } from '../../src/contract/openapi.js';
import { startServer, type TestServer } from '../helpers.js';
import {
  call,
  client,
  createPat,
  createPublisher,
  createUser,
  expectError,
  makeZip,
  publish,
  type Reply,
  type TestUser,
} from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
let owner: TestUser;
let pat: string;

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  owner = await createUser(server, 'incumbent-owner');
  await createPublisher(server, owner, 'legacy-co');
  pat = await createPat(server, owner, 'legacy-co');
});
afterAll(() => server.close());

/** One request exactly as given: these headers and these bytes, nothing added but Host. */
function raw(method: string, path: string, headers: Record<string, string>, body: Buffer | string): Promise<Reply> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({
            status: res.statusCode!,
            headers: new Headers(res.headers as Record<string, string>),
            body: parsed,
            text,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The headers the incumbent's HTTP library sends with a JSON body: no Authorization. */
const jsonHeaders = (body: string) => ({
  'User-Agent': 'python-requests/2.32.3',
  'Accept-Encoding': 'gzip, deflate',
  Accept: '*/*',
  Connection: 'keep-alive',
  'Content-Type': 'application/json',
  'Content-Length': String(Buffer.byteLength(body)),
});

/** The incumbent's publish body for `nodeId` at `version`, serialised as its JSON encoder writes it. */
function incumbentBody(nodeId: string, version: string, node: Record<string, unknown> = {}): string {
  const body = {
    personal_access_token: pat,
    node: {
      id: nodeId,
      description: 'Relights portraits',
      icon: '',
      name: 'Display Name',
      license: '{"file": "LICENSE"}',
      repository: 'https://example.org/legacy/relight',
      banner_url: '',
      supported_os: ['OS Independent'],
      supported_accelerators: ['GPU :: NVIDIA CUDA'],
      supported_comfyui_version: '>=0.3.0',
      supported_comfyui_frontend_version: '>=1.2.0',
      ...node,
    },
    node_version: {
      version,
      dependencies: ['numpy'],
      supported_os: ['OS Independent'],
      supported_accelerators: ['GPU :: NVIDIA CUDA'],
      supported_comfyui_version: '>=0.3.0',
      supported_comfyui_frontend_version: '>=1.2.0',
    },
  };
  return pythonJson(body);
}

/** JSON as Python's json.dumps writes it: ", " and ": " between items, non-ASCII escaped, undefined left out. */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`).join(', ')}}`;
  }
  return JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

const publishAsIncumbent = (nodeId: string, version: string, node?: Record<string, unknown>) => {
  const body = incumbentBody(nodeId, version, node);
  return raw('POST', `/publishers/legacy-co/nodes/${nodeId}/versions`, jsonHeaders(body), body);
};

/** The incumbent's upload: Content-Type and Content-Length, no checksum header; it accepts only 200. */
function uploadAsIncumbent(signedUrl: string, zip: Buffer): Promise<Reply> {
  return raw(
    'PUT',
    signedUrl,
    {
      'User-Agent': 'python-requests/2.32.3',
      Accept: '*/*',
      'Content-Type': 'application/zip',
      'Content-Length': String(zip.length),
    },
    zip,
  );
}

describe('the incumbent client, unchanged, against nodereg serve', () => {
  it('publishes with its exact body (PAT in the body only), uploads without a checksum, and the result reads back under our names and the hosted ones', async () => {
    const published = await publishAsIncumbent('legacy-relight', '1.2.5');
    expect(published.status, published.text).toBe(201);
    expect(published.body.node_version.version).toBe('1.2.5');

    const zip = await makeZip({ '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n', LICENSE: 'MIT\n' });
    const uploaded = await uploadAsIncumbent(published.body.signedUrl, zip);
    expect(uploaded.status, uploaded.text).toBe(200);
    const sha256 = createHash('sha256').update(zip).digest('hex');
    expect(uploaded.body).toMatchObject({
      archive_sha256: sha256,
      archive_size: zip.length,
      status: 'NodeVersionStatusActive',
    });

    const node = (await api.get('/nodes/legacy-relight')).body;
    expect(node).toMatchObject({
      id: 'legacy-relight',
      name: 'Display Name',
      description: 'Relights portraits',
      license: '{"file": "LICENSE"}',
      repository: 'https://example.org/legacy/relight',
      icon: '',
      banner_url: '',
      supported_os: ['OS Independent'],
      supported_accelerators: ['GPU :: NVIDIA CUDA'],
      supported_appui_version: '>=0.3.0',
      supported_appui_frontend_version: '>=1.2.0',
      publisher: { id: 'legacy-co' },
    });
    expect(node.latest_version).toMatchObject({
      version: '1.2.5',
      dependencies: ['numpy'],
      supported_appui_version: '>=0.3.0',
      supported_appui_frontend_version: '>=1.2.0',
      archive_sha256: sha256,
    });
    // Answers carry the hosted names beside ours, with the same values (DESIGN.md §12).
    expect(node).toMatchObject({ supported_comfyui_version: '>=0.3.0', supported_comfyui_frontend_version: '>=1.2.0' });
    expect(node.latest_version).toMatchObject({
      supported_comfyui_version: '>=0.3.0',
      supported_comfyui_frontend_version: '>=1.2.0',
    });

    // The archive comes back byte for byte.
    const download = await fetch(node.latest_version.downloadUrl);
    expect(Buffer.from(await download.arrayBuffer()).equals(zip)).toBe(true);
  });

  it.each([
    ['1', '1.0.0'],
    ['1.0', '1.0.0'],
    ['v1.2', '1.2.0'],
    ['2.1.0+cu121', '2.1.0'],
  ])('takes the short version %j and stores it as %s', async (written, stored) => {
    const nodeId = `short-${written.replace(/[^0-9a-z]/g, '-')}`;
    const published = await publishAsIncumbent(nodeId, written);
    expect(published.status, published.text).toBe(201);
    expect(published.body.node_version.version).toBe(stored);
    expect((await uploadAsIncumbent(published.body.signedUrl, await makeZip())).status).toBe(200);
    const versions = (await api.get(`/nodes/${nodeId}/versions`)).body;
    expect(versions.map((v: { version: string }) => v.version)).toEqual([stored]);
    // The stored version answers to the short form too.
    expect((await api.get(`/nodes/${nodeId}/versions/${written}`)).body.version).toBe(stored);
  });

  it('reads as one version the short form and the full one: the second publish finds the archive there', async () => {
    const first = await publishAsIncumbent('short-twice', '1.0');
    expect((await uploadAsIncumbent(first.body.signedUrl, await makeZip())).status).toBe(200);
    expectError(await publishAsIncumbent('short-twice', '1.0.0+rebuild'), 409, 'conflict');
  });

  it('answers the string keys its reads index, "" when unset, in get, list, search and the publisher', async () => {
    // Published with neither description nor name: the name defaults to the id, the description is "".
    const reply = await publish(server, owner.token, 'legacy-co', 'bare-node', '1.0.0');
    expect(reply.status, reply.text).toBe(201);
    expect(
      (
        await call(
          new URL(reply.body.signedUrl).origin,
          'PUT',
          new URL(reply.body.signedUrl).pathname + new URL(reply.body.signedUrl).search,
          {
            raw: await makeZip(),
            headers: { 'content-type': 'application/zip' },
          },
        )
      ).status,
    ).toBe(200);

    const node = (await api.get('/nodes/bare-node')).body;
    expect(node.description).toBe('');
    expect(node.name).toBe('bare-node');
    for (const key of [
      'author',
      'license',
      'repository',
      'icon',
      'banner_url',
      'category',
      'status_detail',
      'supported_appui_version',
      'supported_appui_frontend_version',
    ]) {
      expect(node[key], key).toBe('');
    }
    for (const key of ['changelog', 'status_reason', 'supported_appui_version', 'supported_appui_frontend_version']) {
      expect(node.latest_version[key], `latest_version.${key}`).toBe('');
    }
    const listed = (await api.get('/nodes?limit=100')).body.nodes.find((n: { id: string }) => n.id === 'bare-node');
    expect(listed).toMatchObject({ description: '', name: 'bare-node' });
    const found = (await api.get('/nodes/search?q=bare-node')).body.nodes.find(
      (n: { id: string }) => n.id === 'bare-node',
    );
    expect(found).toMatchObject({ description: '', name: 'bare-node' });
    const mine = (await api.get('/publishers/legacy-co/nodes')).body.find((n: { id: string }) => n.id === 'bare-node');
    expect(mine).toMatchObject({ description: '' });
    expect(node.publisher).toMatchObject({
      id: 'legacy-co',
      description: '',
      logo: '',
      website: '',
      support: '',
      source_code_repo: '',
    });
  });

  it('keeps a display name and an icon set earlier when a later publish leaves them out or sends "" for the icon', async () => {
    const first = await publish(server, owner.token, 'legacy-co', 'kept-node', '1.0.0', {
      node: { name: 'Kept Name', icon: 'https://example.org/icon.png', banner_url: 'https://example.org/banner.png' },
    });
    expect(first.status, first.text).toBe(201);
    const second = await publishAsIncumbent('kept-node', '1.0.1', { name: undefined });
    expect(second.status, second.text).toBe(201);
    const node = (await api.get('/nodes/kept-node', { token: owner.token })).body;
    expect(node).toMatchObject({
      name: 'Kept Name',
      icon: 'https://example.org/icon.png',
      banner_url: 'https://example.org/banner.png',
    });
    // null still clears.
    const cleared = await api.put('/publishers/legacy-co/nodes/kept-node', {
      token: owner.token,
      body: { icon: null },
    });
    expect(cleared.body.icon).toBe('');
  });

  it('takes the aliases on node and version bodies: update, and the admin-only and read-only ones', async () => {
    const updated = await api.put('/publishers/legacy-co/nodes/kept-node', {
      token: owner.token,
      body: { supported_comfyui_version: '>=0.4.0', preempted_comfy_node_names: ['OldNode'] },
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ supported_appui_version: '>=0.4.0', preempted_app_node_names: ['OldNode'] });
    const stars = await api.put('/publishers/legacy-co/nodes/kept-node', {
      token: server.adminToken,
      body: { github_stars: 42 },
    });
    expect(stars.status, stars.text).toBe(200);
    expect(stars.body.repohost_stars).toBe(42);
    // A member sending the stars it read back is a no-op; a different value is an admin's.
    expect(
      (await api.put('/publishers/legacy-co/nodes/kept-node', { token: owner.token, body: { github_stars: 42 } }))
        .status,
    ).toBe(200);
    expectError(
      await api.put('/publishers/legacy-co/nodes/kept-node', { token: owner.token, body: { github_stars: 7 } }),
      403,
      'forbidden',
    );
    // comfy_node_extract_status is server-set: accepted and ignored, as ours is.
    const version = await publish(server, owner.token, 'legacy-co', 'kept-node', '1.0.2', {
      node_version: { comfy_node_extract_status: 'done' },
    });
    expect(version.status, version.text).toBe(201);
    expect(version.body.node_version.app_node_extract_status).toBe('');
  });

  it('refuses an alias and our name with different values, naming the alias', async () => {
    const reply = await publish(server, owner.token, 'legacy-co', 'kept-node', '1.0.3', {
      node_version: { supported_appui_version: '>=1', supported_comfyui_version: '>=2' },
    });
    expectError(reply, 400, 'invalid_request');
    expect(reply.body.details).toEqual([
      {
        path: 'node_version.supported_comfyui_version',
        message: expect.stringMatching(/differs from supported_appui_version/),
      },
    ]);
    const same = await publish(server, owner.token, 'legacy-co', 'kept-node', '1.0.3', {
      node_version: { supported_appui_version: '>=1', supported_comfyui_version: '>=1' },
    });
    expect(same.status, same.text).toBe(201);
  });
});

describe('OpenAPI: our names canonical, the aliases as deprecated input names', () => {
  const doc = openapiDocument('1.0.0') as any;
  const publishOp = doc.paths['/publishers/{publisherId}/nodes/{nodeId}/versions'].post;
  const body = publishOp.requestBody.content['application/json'].schema;

  it('lists each alias on the bodies that take it, marked deprecated', () => {
    const node = body.properties.node.properties;
    const version = body.properties.node_version.properties;
    for (const alias of [
      'supported_comfyui_version',
      'supported_comfyui_frontend_version',
      'preempted_comfy_node_names',
      'github_stars',
    ]) {
      expect(node[alias], alias).toMatchObject({ deprecated: true });
    }
    for (const alias of [
      'supported_comfyui_version',
      'supported_comfyui_frontend_version',
      'comfy_node_extract_status',
    ]) {
      expect(version[alias], alias).toMatchObject({ deprecated: true });
    }
    expect(node.supported_appui_version.deprecated).toBeUndefined();
    const update =
      doc.paths['/publishers/{publisherId}/nodes/{nodeId}'].put.requestBody.content['application/json'].schema;
    expect(update.properties.github_stars).toMatchObject({ deprecated: true });
  });

  it('answers with our names canonical, the hosted ones deprecated beside them, and requires the string keys answers always carry', () => {
    const node = doc.paths['/nodes/{nodeId}'].get.responses['200'].content['application/json'].schema;
    const hosted = Object.keys(node.properties).filter((key) => key.includes('comfy') || key === 'github_stars');
    expect(hosted.sort()).toEqual([
      'github_stars',
      'preempted_comfy_node_names',
      'supported_comfyui_frontend_version',
      'supported_comfyui_version',
    ]);
    for (const key of hosted) expect(node.properties[key].deprecated, key).toBe(true);
    expect(node.required).toEqual(expect.arrayContaining(['id', 'name', 'description']));
  });
});
