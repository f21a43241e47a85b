// Wire replays, against the real server, of the reads the hosted registry's own clients make, each
// described from the client's public source in our words, with every key it reads checked (DESIGN.md
// §12). A key a client reads by subscript must be there; one it reads with a default may be missing
// but, when there, must have the type it expects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import { call, createPat, createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';

const CATALOGUE = 35; // more than one page of 30
const classPack = (name: string) => ({
  '__init__.py': `class ${name}:\n    RETURN_TYPES = ("IMAGE", "MASK")\n    RETURN_NAMES = ("image", "mask")\n    FUNCTION = "run"\n    CATEGORY = "fx"\n\nNODE_CLASS_MAPPINGS = {"${name}": ${name}}\n`,
});

/** A key read by subscript: present, of this type. */
function indexed(object: Record<string, unknown>, key: string, type: 'string' | 'number' | 'object'): void {
  expect(object, `key ${key}`).toHaveProperty(key);
  expect(typeof object[key], `type of ${key}`).toBe(type);
}
/** A key read with a default: when present, of the type the default has. */
function defaulted(object: Record<string, unknown>, key: string, check: (value: unknown) => boolean): void {
  if (key in object) expect(check(object[key]), `type of ${key}: ${JSON.stringify(object[key])}`).toBe(true);
}
const isString = (value: unknown) => typeof value === 'string';
const isList = (value: unknown) => Array.isArray(value);

/** How comfy-cli and the manager map a version answer: id and version by subscript, the rest with defaults. */
function readVersionAsInstallers(version: Record<string, unknown>): void {
  indexed(version, 'id', 'string');
  indexed(version, 'version', 'string');
  defaulted(version, 'changelog', isString);
  defaulted(version, 'dependencies', isList);
  defaulted(version, 'deprecated', (value) => typeof value === 'boolean');
  defaulted(version, 'downloadUrl', isString);
  defaulted(version, 'status', isString);
}

describe("the hosted registry's clients, replayed", () => {
  let server: TestServer;
  const get = (path: string) => call(server.url, 'GET', path);

  beforeAll(async () => {
    server = await startServer();
    const owner = await createUser(server);
    await createPublisher(server, owner, 'field');
    const pat = await createPat(server, owner, 'field');
    for (let i = 0; i < CATALOGUE; i++)
      await publishAndUpload(server, pat, 'field', `pack-${String(i).padStart(2, '0')}`, '1.0.0');
    await publishAndUpload(
      server,
      pat,
      'field',
      'glow',
      '1.0.0',
      { node_version: { dependencies: ['numpy'] } },
      await makeZip(classPack('GlowFx')),
    );
    await publishAndUpload(
      server,
      pat,
      'field',
      'glow',
      '1.1.0',
      { node_version: { dependencies: ['numpy', 'scipy'] } },
      await makeZip(classPack('GlowFx')),
    );
  }, 120_000);
  afterAll(() => server.close());

  // comfy-cli's registry module (comfy_cli/registry/api.py): "list all" asks GET /nodes once and maps
  // each entry of `nodes`, reading id, name and description by subscript and author, license, icon,
  // repository, tags with defaults; latest_version, when the key is there, is mapped as a version.
  it('comfy-cli: list all nodes', async () => {
    const reply = await get('/nodes');
    expect(reply.status).toBe(200);
    expect(Array.isArray(reply.body.nodes)).toBe(true);
    for (const node of reply.body.nodes) {
      for (const key of ['id', 'name', 'description']) indexed(node, key, 'string');
      for (const key of ['author', 'license', 'icon', 'repository']) defaulted(node, key, isString);
      defaulted(node, 'tags', isList);
      if ('latest_version' in node) readVersionAsInstallers(node.latest_version);
    }
  });

  // comfy-cli's install, with and without a version: GET /nodes/{id}/install, optionally with
  // ?version=, the answer mapped as a version; the download URL is then fetched. Its dependency
  // handling reads the version's `dependencies` list from the same answer.
  it('comfy-cli: install with and without a version, and the dependencies it reads', async () => {
    const latest = await get('/nodes/glow/install');
    expect(latest.status).toBe(200);
    readVersionAsInstallers(latest.body);
    expect(latest.body).toMatchObject({ version: '1.1.0', dependencies: ['numpy', 'scipy'] });
    expect((await fetch(latest.body.downloadUrl)).status).toBe(200);
    const pinned = await get('/nodes/glow/install?version=1.0.0');
    readVersionAsInstallers(pinned.body);
    expect(pinned.body).toMatchObject({ version: '1.0.0', dependencies: ['numpy'] });
  });

  // The manager's catalogue walk (glob/cnr_utils.py): pages of 30 from page 1, each asked with the
  // host's version and an install form factor, until the page number reaches `totalPages`; every
  // entry is kept by its `id`, and one without `latest_version` gets a placeholder.
  it('the manager: catalogue walk, 30 a page until totalPages', async () => {
    const seen = new Map<string, Record<string, unknown>>();
    let page = 1;
    let pages = 0;
    for (let more = true; more; page++) {
      const reply = await get(`/nodes?page=${page}&limit=30&comfyui_version=v0.3.40&form_factor=git-linux`);
      expect(reply.status, reply.text).toBe(200);
      indexed(reply.body, 'totalPages', 'number');
      more = page < reply.body.totalPages;
      pages++;
      for (const node of reply.body.nodes) {
        indexed(node, 'id', 'string');
        seen.set(node.id, node);
      }
    }
    expect(pages).toBe(2);
    expect(seen.size).toBe(CATALOGUE + 1);
    expect(seen.get('glow')!.latest_version).toMatchObject({ version: '1.1.0' });
  });

  // The manager's version list: GET /nodes/{id}/versions with statuses Active and Pending repeated,
  // answered as a JSON list of versions.
  it("the manager: a pack's versions, Active and Pending", async () => {
    const reply = await get('/nodes/glow/versions?statuses=NodeVersionStatusActive&statuses=NodeVersionStatusPending');
    expect(reply.status).toBe(200);
    expect(reply.body.map((v: { version: string }) => v.version)).toEqual(['1.1.0', '1.0.0']);
    for (const version of reply.body) readVersionAsInstallers(version);
  });

  // The frontend's registry service: search with `search` (and a class with `comfy_node_search`),
  // paged by `limit` and `page`, reading `nodes` and `total`; the hosted names of a node's fields.
  it('the frontend: search by text and by node class', async () => {
    const text = await get('/nodes/search?search=glow&limit=64&page=1');
    expect(text.body.nodes.map((n: { id: string }) => n.id)).toEqual(['glow']);
    indexed(text.body, 'total', 'number');
    const byClass = await get('/nodes/search?comfy_node_search=GlowFx&limit=64&page=1');
    expect(byClass.body).toMatchObject({
      total: 1,
      nodes: [{ id: 'glow', supported_comfyui_version: '', supported_comfyui_frontend_version: '' }],
    });
  });

  // The frontend's bulk lookup of installed packs: POST /bulk/nodes/versions with node_id and version
  // pairs, one answer per pair in order, each with its identifier and a status.
  it('the frontend: bulk version lookup', async () => {
    const pairs = [
      { node_id: 'glow', version: '1.0.0' },
      { node_id: 'missing', version: '1.0.0' },
    ];
    const reply = await call(server.url, 'POST', '/bulk/nodes/versions', { body: { node_versions: pairs } });
    expect(reply.status).toBe(200);
    expect(
      reply.body.node_versions.map((item: { identifier: unknown; status: string }) => [item.identifier, item.status]),
    ).toEqual([
      [pairs[0], 'success'],
      [pairs[1], 'not_found'],
    ]);
    readVersionAsInstallers(reply.body.node_versions[0].node_version);
    indexed(reply.body.node_versions[0].node_version, 'comfy_node_extract_status', 'string');
  });

  // The frontend's node-class calls: a version's classes, whose return_types and return_names it
  // JSON.parse()s (an empty list when missing) alongside output_is_list; and the pack of a class.
  it("the frontend: a version's node classes, and the pack of a class", async () => {
    const listed = await get('/nodes/glow/versions/1.1.0/comfy-nodes');
    expect(listed.status).toBe(200);
    indexed(listed.body, 'totalNumberOfPages', 'number');
    const [glow] = listed.body.comfy_nodes;
    expect(glow.comfy_node_name).toBe('GlowFx');
    expect(JSON.parse(glow.return_types)).toEqual(['IMAGE', 'MASK']);
    expect(JSON.parse(glow.return_names)).toEqual(['image', 'mask']);
    expect(Array.isArray(glow.output_is_list)).toBe(true);
    const pack = await get('/comfy-nodes/GlowFx/node');
    expect(pack.body).toMatchObject({ id: 'glow', latest_version: { version: '1.1.0' } });
  });
});
