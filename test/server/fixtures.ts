// Shared by the registry's integration tests: raw HTTP calls to a real server on 127.0.0.1, and the
// accounts, publishers and archives most tests start from.
import yazl from 'yazl';
import { expect } from 'vitest';
import type { TestServer } from '../helpers.js';

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface CallOptions {
  token?: string;
  /** Sent as JSON unless `raw` is given. */
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/** One request; the body is parsed as JSON when it is JSON. */
export async function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(base + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** A client bound to one server. */
export function client(server: TestServer) {
  const at = (method: string) => (path: string, options?: CallOptions) => call(server.url, method, path, options);
  return { get: at('GET'), post: at('POST'), put: at('PUT'), delete: at('DELETE') };
}

/** Asks for /healthz, `gapMs` apart, until `work` settles; returns how long each answer took, in ms. */
export async function healthzWhile(server: TestServer, work: Promise<unknown>, gapMs: number): Promise<number[]> {
  let done = false;
  const settled = work.finally(() => (done = true)).catch(() => {});
  const latencies: number[] = [];
  while (!done) {
    const asked = performance.now();
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200);
    latencies.push(performance.now() - asked);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  await settled;
  return latencies;
}

/** Asserts the error shape of DESIGN.md §2 with this status and code. */
export function expectError(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, error: reply.body?.error }, reply.text).toEqual({ status, error: code });
  expect(typeof reply.body.message).toBe('string');
}

export interface TestUser {
  id: string;
  name: string;
  token: string;
}

let counter = 0;

/** A new user (created by the admin) with its first token. */
export async function createUser(server: TestServer, name = `user${++counter}`): Promise<TestUser> {
  const reply = await call(server.url, 'POST', '/users', {
    token: server.adminToken,
    body: { name, email: `${name}@example.org` },
  });
  expect(reply.status, reply.text).toBe(201);
  return { id: reply.body.user.id, name, token: reply.body.token };
}

/** A publisher owned by `owner`. */
export async function createPublisher(
  server: TestServer,
  owner: TestUser,
  id: string,
  extra: Record<string, unknown> = {},
) {
  const reply = await call(server.url, 'POST', '/publishers', {
    token: owner.token,
    body: { id, name: `Publisher ${id}`, ...extra },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body;
}

/** A personal access token of a publisher, created by one of its owners. */
export async function createPat(
  server: TestServer,
  owner: TestUser,
  publisherId: string,
  name = 'ci',
): Promise<string> {
  const reply = await call(server.url, 'POST', `/publishers/${publisherId}/tokens`, {
    token: owner.token,
    body: { name },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.body.token;
}

/** Makes `user` a member: the owner invites, the user accepts (members join by consent). */
export async function addMember(
  server: TestServer,
  owner: TestUser,
  publisherId: string,
  user: TestUser,
  role = 'member',
) {
  const reply = await call(server.url, 'POST', `/publishers/${publisherId}/members`, {
    token: owner.token,
    body: { user: user.id, role },
  });
  expect(reply.status, reply.text).toBe(201);
  const accepted = await call(server.url, 'POST', `/users/me/invitations/${publisherId}/accept`, { token: user.token });
  expect(accepted.status, accepted.text).toBe(200);
}

/** Publishes a version (the node is created when new); returns the reply. */
export function publish(
  server: TestServer,
  token: string,
  publisherId: string,
  nodeId: string,
  version: string,
  extra: { node?: Record<string, unknown>; node_version?: Record<string, unknown> } = {},
): Promise<Reply> {
  return call(server.url, 'POST', `/publishers/${publisherId}/nodes/${nodeId}/versions`, {
    token,
    body: { node: { id: nodeId, ...extra.node }, node_version: { version, ...extra.node_version } },
  });
}

/** A small valid zip made of these files. */
export function makeZip(
  files: Record<string, string | Buffer> = { '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n' },
): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files))
    zip.addBuffer(Buffer.from(content), name, { mtime: new Date(2020, 0, 1) });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/** PUTs an archive to a signed URL the way the CLI does. */
export async function uploadTo(signedUrl: string, zip: Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  const { createHash } = await import('node:crypto');
  const sha256 = createHash('sha256').update(zip).digest('hex');
  const url = new URL(signedUrl);
  return call(url.origin, 'PUT', url.pathname + url.search, {
    raw: zip,
    headers: { 'content-type': 'application/zip', 'x-content-sha256': sha256, ...headers },
  });
}

/** Publishes a version and uploads a small archive to it; returns the uploaded NodeVersion. */
export async function publishAndUpload(
  server: TestServer,
  token: string,
  publisherId: string,
  nodeId: string,
  version: string,
  extra: Parameters<typeof publish>[5] = {},
  zip?: Buffer,
) {
  const published = await publish(server, token, publisherId, nodeId, version, extra);
  expect(published.status, published.text).toBe(201);
  const uploaded = await uploadTo(
    published.body.signedUrl,
    zip ?? (await makeZip({ 'node.py': `# ${nodeId} ${version}\n` })),
  );
  expect(uploaded.status, uploaded.text).toBe(200);
  return uploaded.body;
}

/**
 * `# eval` (the text gate admits the file, so it is parsed; a comment, so it holds no finding when its
 * parse does end), then random brackets, `bytes` in all.
 */
export function garbage(seed: number, bytes = 4 * 1024 * 1024): Buffer {
  const text = Buffer.alloc(bytes, '()[]{}');
  let state = seed;
  for (let i = 7; i < bytes; i++)
    text[i] = '()[]{}'.charCodeAt(((state = (state * 1103515245 + 12345) >>> 0) >>> 16) % 6);
  text.write('# eval\n');
  return text;
}
