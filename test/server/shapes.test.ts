// Every registry operation of the contract, called once on a real server: it answers its success
// status and a body its contract response schema accepts. A new operation without an entry here fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../src/contract/operation.js';
import { buildPath } from '../../src/contract/operation.js';
import { registryOperations } from '../../src/contract/registry.js';
import { startServer, type TestServer } from '../helpers.js';
import {
  call,
  createPat,
  createPublisher,
  createUser,
  makeZip,
  publish,
  type Reply,
  type TestUser,
} from './fixtures.js';

let server: TestServer;
let owner: TestUser;
let other: TestUser;
let pat = '';
let versionId = '';
let signedUrl = '';

beforeAll(async () => {
  server = await startServer();
  owner = await createUser(server, 'owner');
  other = await createUser(server, 'other');
  await createPublisher(server, owner, 'shape-co');
  pat = await createPat(server, owner, 'shape-co');
  const published = await publish(server, owner.token, 'shape-co', 'shape-node', '1.0.0', {
    node: { name: 'Shape', tags: ['t'] },
  });
  versionId = published.body.node_version.id;
  signedUrl = published.body.signedUrl;
});
afterAll(() => server.close());

type Request = {
  params?: Record<string, string>;
  query?: string;
  token?: () => string;
  body?: unknown;
  send?: () => Promise<Reply>;
};

// In this order: the upload happens before the reads that need an Active version.
const requests: Record<string, Request> = {
  publishVersion: {
    params: { publisherId: 'shape-co', nodeId: 'shape-node' },
    token: () => pat,
    body: { node_version: { version: '1.1.0' } },
  },
  uploadArchive: {
    send: async () => {
      const zip = await makeZip();
      const url = new URL(signedUrl);
      return call(url.origin, 'PUT', url.pathname + url.search, {
        raw: zip,
        headers: { 'content-type': 'application/zip' },
      });
    },
  },
  updateNode: {
    params: { publisherId: 'shape-co', nodeId: 'shape-node' },
    token: () => owner.token,
    body: { description: 'd' },
  },
  updatePublisher: {
    params: { publisherId: 'shape-co' },
    token: () => owner.token,
    body: { website: 'https://shape.example' },
  },
  updateVersion: {
    params: { publisherId: 'shape-co', nodeId: 'shape-node', versionId: '1.0.0' },
    token: () => pat,
    body: { changelog: 'c' },
  },
  addReview: { params: { nodeId: 'shape-node' }, query: 'star=4', token: () => other.token },
  downloadArchive: { params: { publisherId: 'shape-co', nodeId: 'shape-node', version: '1.0.0' } },
  listNodes: { query: 'sort=rating' },
  searchNodes: { query: 'q=shape' },
  getNode: { params: { nodeId: 'SHAPE-NODE' } },
  listNodeVersions: { params: { nodeId: 'shape-node' } },
  getNodeVersion: { params: { nodeId: 'shape-node', version: '1.0.0' } },
  listApprovedFindings: { params: { nodeId: 'shape-node' }, token: () => pat },
  installNode: { params: { nodeId: 'shape-node' } },
  bulkNodeVersions: {
    body: {
      node_versions: [
        { node_id: 'shape-node', version: '1.0.0' },
        { node_id: 'none', version: '1.0.0' },
      ],
    },
  },
  listVersionComfyNodes: { params: { nodeId: 'shape-node', version: '1.0.0' } },
  getVersionComfyNode: {
    send: async () => {
      // a version that defines a class: the archive shapes' own defines none
      const published = await publish(server, pat, 'shape-co', 'shape-classes', '1.0.0');
      const zip = await makeZip({
        '__init__.py':
          'class A:\n    RETURN_TYPES = ("IMAGE",)\n    FUNCTION = "f"\nNODE_CLASS_MAPPINGS = {"ShapeA": A}\n',
      });
      const url = new URL(published.body.signedUrl);
      await call(url.origin, 'PUT', url.pathname + url.search, {
        raw: zip,
        headers: { 'content-type': 'application/zip' },
      });
      return call(server.url, 'GET', '/nodes/shape-classes/versions/1.0.0/comfy-nodes/ShapeA');
    },
  },
  getComfyNodeNode: { send: () => call(server.url, 'GET', '/comfy-nodes/ShapeA/node') },
  listComfyNodes: {},
  getPublisher: { params: { publisherId: 'shape-co' } },
  listPublisherNodes: { params: { publisherId: 'shape-co' } },
  health: {},
  ready: {},
  getLimits: {},
  openapiDocument: {},
  metrics: { token: () => server.adminToken },
  getMe: { token: () => pat },
  createUser: { token: () => server.adminToken, body: { name: 'new', email: 'new@example.org' } },
  listUserTokens: { token: () => owner.token },
  createUserToken: { token: () => owner.token, body: { name: 'n' } },
  deleteUserToken: {
    send: async () => {
      const created = await call(server.url, 'POST', '/users/me/tokens', {
        token: owner.token,
        body: { name: 'gone' },
      });
      return call(server.url, 'DELETE', `/users/me/tokens/${created.body.id}`, { token: owner.token });
    },
  },
  createPublisher: { token: () => other.token, body: { id: 'other-co' } },
  listPublisherTokens: { params: { publisherId: 'shape-co' }, token: () => owner.token },
  createPublisherToken: { params: { publisherId: 'shape-co' }, token: () => owner.token, body: { name: 'p' } },
  deletePublisherToken: {
    send: async () => {
      const created = await call(server.url, 'POST', '/publishers/shape-co/tokens', {
        token: owner.token,
        body: { name: 'gone' },
      });
      return call(server.url, 'DELETE', `/publishers/shape-co/tokens/${created.body.id}`, { token: owner.token });
    },
  },
  addPublisherMember: {
    params: { publisherId: 'shape-co' },
    token: () => owner.token,
    get body() {
      return { user_id: other.id };
    },
  },
  listPublisherInvitations: { params: { publisherId: 'shape-co' }, token: () => owner.token },
  listMyInvitations: { token: () => other.token },
  acceptInvitation: { params: { publisherId: 'shape-co' }, token: () => other.token },
  removePublisherMember: {
    send: () => call(server.url, 'DELETE', `/publishers/shape-co/members/${other.id}`, { token: owner.token }),
  },
  declineInvitation: {
    send: async () => {
      await call(server.url, 'POST', '/publishers/shape-co/members', { token: owner.token, body: { user: 'other' } });
      return call(server.url, 'DELETE', '/users/me/invitations/shape-co', { token: other.token });
    },
  },
  appealVersion: {
    send: async () => {
      const published = await publish(server, owner.token, 'shape-co', 'shape-flagged', '1.0.0');
      const zip = await makeZip({ 'run.py': 'import subprocess\nsubprocess.run(input(), shell=True)\n' });
      const url = new URL(published.body.signedUrl);
      await call(url.origin, 'PUT', url.pathname + url.search, {
        raw: zip,
        headers: { 'content-type': 'application/zip' },
      });
      return call(server.url, 'POST', '/publishers/shape-co/nodes/shape-flagged/versions/1.0.0/appeal', {
        token: owner.token,
        body: { message: 'please look again' },
      });
    },
  },
  reviewQueue: { token: () => server.adminToken },
  decideVersion: {
    params: { nodeId: 'shape-flagged', versionId: '1.0.0' },
    token: () => server.adminToken,
    body: { decision: 'approve', message: 'fine' },
  },
};

/** Paths of null values: the wire has none, except a token never used and a version's classes when it defines none (as the hosted registry answers). */
function nulls(value: unknown, path = ''): string[] {
  if (value === null) return path.endsWith('last_used_at') || path === '.comfy_nodes' ? [] : [path];
  if (typeof value !== 'object') return [];
  return Object.entries(value as object).flatMap(([key, inner]) => nulls(inner, `${path}.${key}`));
}

describe('every registry operation', () => {
  it('has a request here', () => {
    expect(registryOperations.map((op) => op.id).filter((id) => !(id in requests))).toEqual([]);
  });

  const ordered = Object.keys(requests).map((id) => registryOperations.find((op) => op.id === id)!);
  it.each(ordered.map((op) => [op.id, op] as [string, Operation]))(
    '%s answers its status and shape',
    async (_id, op) => {
      const request = requests[op.id];
      const reply = request.send
        ? await request.send()
        : await call(
            server.url,
            op.method,
            buildPath(op.path, request.params ?? {}) + (request.query ? `?${request.query}` : ''),
            {
              token: request.token?.(),
              body: request.body,
            },
          );
      expect(reply.status, reply.text).toBe(op.status);
      if (op.responseKind === 'json') {
        expect(() => op.response.parse(reply.body)).not.toThrow();
        expect(nulls(reply.body)).toEqual([]);
      }
      if (op.responseKind === 'zip') expect(reply.headers.get('content-type')).toBe('application/zip');
      if (op.responseKind === 'text') expect(reply.headers.get('content-type')).toMatch(/^text\/plain/);
      if (op.status === 204) expect(reply.text).toBe('');
    },
  );
});
