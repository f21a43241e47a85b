// The generated OpenAPI document covers every operation of spec/interface.md with its schemas.
import { describe, expect, it } from 'vitest';
import { contentEncodingProblem, contentTypeProblem, mediaRefusal } from '../../src/contract/media.js';
import { openapiDocument } from '../../src/contract/openapi.js';

type Json = Record<string, any>;

const doc = JSON.parse(JSON.stringify(openapiDocument('1.0.0'))) as Json;

const specOperations: { method: string; path: string; body: boolean; status: string }[] = [
  { method: 'post', path: '/publishers/{publisherId}/nodes/{nodeId}/versions', body: true, status: '201' },
  { method: 'put', path: '/publishers/{publisherId}/nodes/{nodeId}', body: true, status: '200' },
  { method: 'put', path: '/publishers/{publisherId}', body: true, status: '200' },
  { method: 'put', path: '/publishers/{publisherId}/nodes/{nodeId}/versions/{versionId}', body: true, status: '200' },
  { method: 'post', path: '/nodes/{nodeId}/reviews', body: false, status: '200' },
  { method: 'post', path: '/proxy/img/v1/ai/image-relight', body: true, status: '200' },
  { method: 'post', path: '/proxy/img/v1/ai/skin-enhancer/flexible', body: true, status: '200' },
  { method: 'post', path: '/proxy/vid/extend', body: true, status: '200' },
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const allOps = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
  Object.entries(item as Json)
    .filter(([method]) => METHODS.includes(method))
    .map(([method, op]) => ({ path, method, op: op as Json })),
);

function responseSchema(op: Json, status: string): Json | undefined {
  return op.responses?.[status]?.content?.['application/json']?.schema;
}
function bodySchema(op: Json): Json | undefined {
  return op.requestBody?.content?.['application/json']?.schema;
}

describe('openapiDocument', () => {
  it('survives a JSON round trip unchanged', () => {
    const original = openapiDocument('1.0.0');
    expect(JSON.parse(JSON.stringify(original))).toEqual(original);
  });

  it('is OpenAPI 3.1.0 with the given version', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(typeof doc.info.title).toBe('string');
  });

  it('adds a server only when given one', () => {
    expect(doc.servers).toBeUndefined();
    const withServer = openapiDocument('1.0.0', 'http://127.0.0.1:4880') as Json;
    expect(withServer.servers).toEqual([{ url: 'http://127.0.0.1:4880' }]);
  });

  describe.each(specOperations)('$method $path', ({ method, path, body, status }) => {
    const op = (doc.paths as Json)[path]?.[method] as Json | undefined;

    it('is present', () => {
      expect(op, `${method.toUpperCase()} ${path}`).toBeDefined();
    });

    it(`has a JSON success response ${status} with a schema`, () => {
      const schema = responseSchema(op!, status);
      expect(schema).toBeDefined();
      expect(schema!.type).toBe('object');
      expect(Object.keys(schema!.properties ?? {}).length).toBeGreaterThan(0);
    });

    it(body ? 'has a required JSON request body with a schema' : 'has no request body', () => {
      if (body) {
        expect(op!.requestBody?.required).toBe(true);
        const schema = bodySchema(op!);
        expect(schema?.type).toBe('object');
        expect(Object.keys(schema!.properties ?? {}).length).toBeGreaterThan(0);
      } else {
        expect(op!.requestBody).toBeUndefined();
      }
    });

    it('declares every path parameter', () => {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (op!.parameters as Json[]).filter((p) => p.in === 'path');
      expect(declared.map((p) => p.name).sort()).toEqual([...names].sort());
      for (const p of declared) expect(p.required).toBe(true);
    });

    it('describes error responses with the error schema', () => {
      expect(op!.responses['400']?.content?.['application/json']?.schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
    });
  });

  it('review requires an integer star query parameter from 1 to 5', () => {
    const op = doc.paths['/nodes/{nodeId}/reviews'].post as Json;
    const star = (op.parameters as Json[]).find((p) => p.name === 'star');
    expect(star).toMatchObject({ in: 'query', required: true });
    expect(star!.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 5 });
  });

  it('the success schemas describe the spec responses', () => {
    const publish = responseSchema(doc.paths['/publishers/{publisherId}/nodes/{nodeId}/versions'].post, '201')!;
    expect(Object.keys(publish.properties)).toEqual(expect.arrayContaining(['node_version', 'signedUrl']));
    const relight = responseSchema(doc.paths['/proxy/img/v1/ai/image-relight'].post, '200')!;
    expect(relight.required).toContain('data');
    expect(Object.keys(relight.properties.data.properties)).toEqual(expect.arrayContaining(['generated', 'task_id']));
    const video = responseSchema(doc.paths['/proxy/vid/extend'].post, '200')!;
    expect(video.required).toEqual(expect.arrayContaining(['credits', 'state', 'task_id']));
    expect(video.properties.state.enum.sort()).toEqual(['created', 'failed', 'processing', 'queueing', 'success']);
    const node = responseSchema(doc.paths['/publishers/{publisherId}/nodes/{nodeId}'].put, '200')!;
    expect(node.properties.status.enum.sort()).toEqual(['NodeStatusActive', 'NodeStatusBanned', 'NodeStatusDeleted']);
  });

  it('the request schemas carry the rules', () => {
    const relight = bodySchema(doc.paths['/proxy/img/v1/ai/image-relight'].post)!;
    expect(relight.required).toEqual(['image']);
    expect(relight.properties.light_transfer_strength).toMatchObject({
      type: 'integer',
      minimum: 0,
      maximum: 100,
      default: 100,
    });
    const skin = bodySchema(doc.paths['/proxy/img/v1/ai/skin-enhancer/flexible'].post)!;
    expect(skin.required).toEqual(['image']);
    expect(skin.properties.smart_grain).toMatchObject({ type: 'integer', minimum: 0, maximum: 100, default: 2 });
    const video = bodySchema(doc.paths['/proxy/vid/extend'].post)!;
    expect(video.required).toEqual(['model']);
    expect(video.properties.duration).toMatchObject({ type: 'integer', minimum: 1, maximum: 7, default: 5 });
    expect(video.properties.prompt).toMatchObject({ maxLength: 2000 });
    expect(video.properties.payload).toMatchObject({ maxLength: 1048576 });
    expect(video.properties.images).toMatchObject({ minItems: 1, maxItems: 1 });
    const publish = bodySchema(doc.paths['/publishers/{publisherId}/nodes/{nodeId}/versions'].post)!;
    expect(publish.required).toContain('node_version');
    expect(Object.keys(publish.properties)).toEqual(
      expect.arrayContaining(['node', 'node_version', 'personal_access_token']),
    );
    const version = bodySchema(doc.paths['/publishers/{publisherId}/nodes/{nodeId}/versions/{versionId}'].put)!;
    expect(version.properties.changelog.type).toBe('string');
    expect(version.properties.deprecated.type).toBe('boolean');
  });

  it('every spec operation requires bearer auth (DESIGN.md §2 adds it to review and video extend)', () => {
    // DESIGN.md §2: every spec operation, review and video extend included, requires a token
    for (const { method, path } of specOperations) {
      expect(doc.paths[path][method].security, `${method} ${path}`).toEqual([{ bearer: [] }]);
    }
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
  });

  it('every operation id is unique and present', () => {
    const ids = allOps.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThanOrEqual(specOperations.length);
  });

  it('every {param} of every path has a required path parameter, and no path parameter is unused', () => {
    for (const { path, method, op } of allOps) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      const declared = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path');
      expect(declared.map((p) => p.name).sort(), `${method} ${path}`).toEqual(names);
      expect(
        declared.every((p) => p.required === true),
        `${method} ${path}`,
      ).toBe(true);
    }
  });

  it('every $ref points at a defined component', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      const target = ref.slice(8, -1);
      if (!target.startsWith('#/components/schemas/')) continue; // internal refs of a schema ($defs)
      expect(doc.components.schemas[target.slice('#/components/schemas/'.length)], target).toBeDefined();
    }
  });

  it('an operation with a body takes no Content-Encoding but identity, and its 415 says why (src/contract/media.ts)', () => {
    const withBody = allOps.filter(({ op }) => op.requestBody);
    expect(withBody.map(({ op }) => op.operationId)).toContain('uploadArchive');
    for (const { op } of withBody) {
      const kind = op.requestBody.content['application/zip'] ? 'zip' : 'json';
      expect(
        op.parameters.find((p: Json) => p.in === 'header'),
        op.operationId,
      ).toMatchObject({ name: 'Content-Encoding', required: false, schema: { enum: ['identity'] } });
      expect(op.responses['415'].description, op.operationId).toBe(`unsupported_media_type: ${mediaRefusal(kind)}`);
    }
    for (const { op } of allOps.filter(({ op }) => !op.requestBody))
      expect(
        op.parameters.some((p: Json) => p.in === 'header'),
        op.operationId,
      ).toBe(false);
    expect(contentEncodingProblem('identity')).toBeUndefined();
    expect(contentEncodingProblem(' IDENTITY ')).toBeUndefined();
    expect(contentEncodingProblem(undefined)).toBeUndefined();
    expect(contentEncodingProblem('gzip')).toBe(
      'the server does not decode Content-Encoding: gzip; send the body unencoded (no Content-Encoding header)',
    );
    expect(contentTypeProblem('json', 'application/vnd.x+json; charset=utf-8')).toBeUndefined();
    expect(contentTypeProblem('zip', 'application/zipx')).toBe(
      'send the archive with Content-Type: application/zip (got "application/zipx")',
    );
    expect(contentTypeProblem('json', undefined)).toBe(
      'send the body as JSON with Content-Type: application/json (got "none")',
    );
  });
});
