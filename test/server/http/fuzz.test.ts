// Fuzzing of every operation of the contract (allOperations: a new route is fuzzed without a line
// here) against a registry in its own process on 127.0.0.1: bodies from each operation's own schema,
// valid and mutated, broken JSON, invalid UTF-8, deep nesting, duplicated keys, wrong content types,
// hostile path parameters, query strings and headers; then raw malformed HTTP on a socket. Every
// answer must be a success or a 4xx in the error shape: never a 5xx, a hang, a dropped connection,
// an internal error in the server's log, or a crash; and the server answers after.
import { createHash } from 'node:crypto';
import { Agent, createServer, request } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../../src/contract/error-body.js';
import { ERROR_STATUS } from '../../../src/contract/errors.js';
import { allOperations } from '../../../src/contract/openapi.js';
import { buildPath, type Operation } from '../../../src/contract/operation.js';
import { tempDir, type TestServer } from '../../helpers.js';
import {
  addMember,
  call,
  createPat,
  createPublisher,
  createUser,
  publish,
  uploadTo,
  type TestUser,
} from '../fixtures.js';
import { rawZip } from '../zip-builder.js';
import { startChild, storedZip, type ChildServer } from '../child.js';
import { figure, runs, SEED } from '../../figures.js';
import { jsonBody, NASTY_STRINGS, rawMessages, urlString, type Known } from './fuzz-arbitraries.js';

const RUNS_PER_OPERATION = runs(110, 6000);
const RAW_RUNS = runs(25, 1500); // each run sends 8 raw messages at once, half-closed after writing
const RAW_OPEN_RUNS = runs(2, 40); // each run sends 8 and leaves the sockets open until the server ends them
const REQUEST_TIMEOUT_MS = 20_000;
const MAX_ARCHIVE = 1024 * 1024;

let child: ChildServer;
let server: TestServer;
let owner: TestUser;
let member: TestUser;
let stranger: TestUser;
const tokens: Record<string, string> = {};
const ids = {
  versions: [] as string[],
  userTokens: [] as string[],
  pats: [] as string[],
  users: [] as string[],
  tasks: [] as string[],
};
let signed = { expires: '', signature: '', tokenId: '', versionId: '' };
let zips: Buffer[] = [];
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
/** Where generated callbacks point: a receiver on 127.0.0.1 that answers 200 and counts them. */
let receiverUrl = '';
let callbacksReceived = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    callbacksReceived++;
    res.end('ok');
  });
});
const counts = { http: 0, raw: 0, withoutToken: 0, byStatus: new Map<number, number>() };
/** An error answer is small whatever was sent (at most 20 field problems, cut keys and messages). */
const ERROR_ANSWER_MAX = 16 * 1024;

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  child = await startChild(tempDir('nodereg-fuzz-'), {
    options: {
      log: true,
      maxArchive: MAX_ARCHIVE,
      maxUnpacked: 4 * MAX_ARCHIVE,
      headersTimeout: 1_000,
      requestTimeout: 2_000,
      proxy: { sandboxDelay: 300 },
    },
  });
  server = { url: child.url, adminToken: child.adminToken } as TestServer;
  owner = await createUser(server, 'fuzz-owner');
  member = await createUser(server, 'fuzz-member');
  stranger = await createUser(server, 'fuzz-stranger');
  await createPublisher(server, owner, 'fuzz-pub');
  await createPublisher(server, stranger, 'other-pub');
  await addMember(server, owner, 'fuzz-pub', member);
  tokens.admin = child.adminToken;
  tokens.owner = owner.token;
  tokens.member = member.token;
  tokens.stranger = stranger.token;
  tokens.pat = await createPat(server, owner, 'fuzz-pub');
  tokens.strangerPat = await createPat(server, stranger, 'other-pub');
  ids.users = [owner.id, member.id, stranger.id, 'admin'];
  // Tokens the fuzzer may revoke (never the ones it sends).
  for (let i = 0; i < 3; i++) {
    const user = await call(server.url, 'POST', '/users/me/tokens', {
      token: owner.token,
      body: { name: `spare${i}` },
    });
    ids.userTokens.push(user.body.id);
    const pat = await call(server.url, 'POST', '/publishers/fuzz-pub/tokens', {
      token: owner.token,
      body: { name: `spare${i}` },
    });
    ids.pats.push(pat.body.id);
  }
  zips = [
    await storedZip({ '__init__.py': 'x = 1\n' }),
    rawZip([{ name: 'a/../../evil.py', data: Buffer.from('x') }]),
    rawZip([{ name: '/etc/evil.py', data: Buffer.from('x') }]),
    await storedZip({ 'big.bin': Buffer.alloc(MAX_ARCHIVE + 10) }),
  ];
  for (const [nodeId, publisher, token] of [
    ['fuzz-node', 'fuzz-pub', owner.token],
    ['other-node', 'other-pub', stranger.token],
  ]) {
    const first = await publish(server, token, publisher, nodeId, '1.0.0', {
      node: { name: 'Fuzz', description: 'fuzzing target', tags: ['x'] },
    });
    expect((await uploadTo(first.body.signedUrl, zips[0])).status).toBe(200);
    ids.versions.push(first.body.node_version.id);
  }
  for (const [path, body] of [
    ['/proxy/img/v1/ai/image-relight', { image: 'https://127.0.0.1/a.png' }],
    ['/proxy/img/v1/ai/skin-enhancer/flexible', { image: 'https://127.0.0.1/a.png' }],
    ['/proxy/vid/extend', { model: 'vidq2-turbo' }],
  ] as const) {
    const task = await call(server.url, 'POST', path, { token: owner.token, body });
    if (task.status === 200) ids.tasks.push(task.body.data?.task_id ?? task.body.task_id);
  }
  const pending = await publish(server, owner.token, 'fuzz-pub', 'fuzz-node', '1.1.0');
  ids.versions.push(pending.body.node_version.id);
  const url = new URL(pending.body.signedUrl);
  signed = {
    expires: url.searchParams.get('expires')!,
    signature: url.searchParams.get('signature')!,
    tokenId: url.searchParams.get('token_id')!,
    versionId: pending.body.node_version.id,
  };
}, 60_000);

afterAll(async () => {
  agent.destroy();
  receiver.close();
  await child?.close();
});

// ---- what the fuzzer knows: existing ids, tokens, and good values for query parameters ----

// Mostly ids that exist, so that requests get past the 404s to the checks behind them.
const pool = (...values: string[]) =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: urlString });

function paramArbitrary(name: string): fc.Arbitrary<string> {
  switch (name) {
    case 'publisherId':
      return pool('fuzz-pub', 'other-pub', 'FUZZ-PUB', 'nobody-here');
    case 'nodeId':
      return pool('fuzz-node', 'Fuzz-Node', 'other-node', 'no-such-node');
    case 'versionId':
      return pool(...ids.versions, signed.versionId, '1.0.0', 'v1.1.0', '9.9.9');
    case 'version':
      return pool('1.0.0', 'v1.0.0', '1.1.0', '1.0.0-rc.1');
    case 'tokenId':
      return pool(...ids.userTokens, ...ids.pats);
    case 'userId':
      return pool(...ids.users);
    case 'task_id':
      return pool(...ids.tasks, 'no-such-task');
    default:
      return urlString;
  }
}

function coherentParams(): Record<string, string>[] {
  return [
    {
      publisherId: 'fuzz-pub',
      nodeId: 'fuzz-node',
      versionId: ids.versions[0],
      version: '1.0.0',
      tokenId: ids.pats[0],
      userId: member.id,
      task_id: ids.tasks[0],
    },
    {
      publisherId: 'fuzz-pub',
      nodeId: 'fuzz-node',
      versionId: signed.versionId,
      version: '1.1.0',
      tokenId: ids.userTokens[0],
      userId: owner.id,
      task_id: ids.tasks[1],
    },
    {
      publisherId: 'other-pub',
      nodeId: 'other-node',
      versionId: ids.versions[1],
      version: '1.0.0',
      tokenId: ids.pats[1],
      userId: stranger.id,
      task_id: ids.tasks[2],
    },
  ];
}

const numberish = fc.constantFrom(
  '1',
  '2',
  '5',
  '20',
  '100',
  '0',
  '-1',
  '6',
  '101',
  '3.5',
  '1e1',
  '0x3',
  ' 3',
  '+3',
  '',
  'NaN',
  '99999999999999999999',
);
function queryValue(name: string): fc.Arbitrary<string> {
  switch (name) {
    case 'star':
    case 'page':
    case 'limit':
      return fc.oneof({ weight: 3, arbitrary: numberish }, { weight: 1, arbitrary: urlString });
    case 'sort':
      return pool('created_at', 'downloads', 'rating', 'name', 'search_ranking');
    case 'version':
      return pool('1.0.0', '1.1.0', 'v1.0.0');
    case 'expires':
      return pool(signed.expires, '0', '99999999999');
    case 'signature':
      return pool(
        signed.signature,
        signed.signature.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
        'f'.repeat(64),
      );
    case 'token_id':
      return pool(signed.tokenId, ...ids.pats);
    default:
      return urlString;
  }
}

const known: Known = (name) => {
  switch (name) {
    case 'id':
      return fc.constantFrom('fuzz-node', 'other-node', 'fuzz-pub', 'other-pub', 'new-node', 'new-pub');
    case 'user_id':
      return fc.constantFrom(...ids.users);
    case 'version':
      return fc.constantFrom('1.0.0', '1.1.0', 'v1.1.0', '2.0.0', '1.2.0-beta.1');
    case 'webhook_url':
    case 'callback_url':
      // callbacks go to a receiver of this test, or to hosts the registry must refuse at submission
      return fc.oneof(
        { weight: 3, arbitrary: fc.webPath().map((path) => `${receiverUrl}${path}`) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'http://192.0.2.1/hook',
            'https://hooks.example.test/h',
            'http://[::2]/x',
            'ftp://127.0.0.1/x',
            'http:127.0.0.1',
            'hook',
          ),
        },
      );
    case 'personal_access_token':
      return fc.constantFrom(tokens.pat, tokens.strangerPat, 'nrg_pat_nothing');
    default:
      return undefined;
  }
};

const encodeBytes = (value: string) =>
  [...Buffer.from(value, 'utf8')]
    .map((b) =>
      /[\w.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`,
    )
    .join('');

/** Percent-encodes a path segment, or (raw) sends it as it is when the client can: %ff, %00 and bytes over 0x7f reach the server as such. */
const segment = (value: string, raw: boolean) =>
  raw && /^[\x21-\xff]+$/.test(value) && !/[/?#]/.test(value) ? value : encodeBytes(value);

// ---- requests ----

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

const headerValue = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((c) => c !== 0x7f)
    .map((c) => String.fromCharCode(c)),
  maxLength: 60,
});
const authorization = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .constantFrom('admin', 'owner', 'owner', 'member', 'stranger', 'pat', 'pat', 'strangerPat')
      .map((who) => `Bearer ${tokens[who]}`),
  },
  { weight: 2, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Basic Zm9vOmJhcg==',
        'bearer nrg_u_nothing',
        'Bearer nrg_u_x nrg_u_y',
        `Bearer ${'t'.repeat(8_000)}`,
        'Token abc',
      ),
      headerValue.map((v) => `Bearer ${v}`),
    ),
  },
);
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'application/zip',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      'application/json; charset=latin1',
      'application/jsonx',
      ' application/json',
      'application/zip; x=y',
    ),
  },
  { weight: 1, arbitrary: headerValue },
);
const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'x-content-sha256',
    'if-none-match',
    'accept',
    'accept-encoding',
    'content-encoding',
    'x-forwarded-for',
    'x-forwarded-host',
    'cookie',
    'range',
    'expect-ct',
    'x-random',
    'origin',
    'user-agent',
  ),
  headerValue,
  { maxKeys: 3 },
);

function requestFor(operation: Operation): fc.Arbitrary<FuzzRequest> {
  const names = [...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const independent = fc
    .tuple(...names.map((name) => fc.tuple(paramArbitrary(name), fc.nat(9))))
    .map((values) => Object.fromEntries(values.map(([value, mode], i) => [names[i], segment(value, mode < 3)])));
  // Parameters that belong together (a publisher, its node, that node's version), so that requests reach
  // the checks behind the 404s.
  const coherent = fc
    .constantFrom(...coherentParams())
    .map((set) => Object.fromEntries(names.map((name) => [name, encodeBytes(set[name] ?? 'x')])));
  const params = names.length
    ? fc.oneof({ weight: 3, arbitrary: coherent }, { weight: 2, arbitrary: independent })
    : independent;
  const queryShape = Object.keys((operation.query as unknown as { shape?: Record<string, unknown> }).shape ?? {});
  const query = fc
    .tuple(
      fc.tuple(...queryShape.map((name) => fc.option(queryValue(name), { freq: 4 }))),
      fc.array(fc.tuple(fc.constantFrom(...queryShape, 'x', 'page', 'q', '__proto__', '', 'a[b]'), urlString), {
        maxLength: 2,
      }),
      fc.option(fc.constantFrom('%ff', '%', '%zz=1', '&&&', '=', 'a=%00', 'q=%ed%a0%80', `pad=${'p'.repeat(5000)}`), {
        freq: 6,
      }),
    )
    .map(([values, extra, raw]) => {
      const parts: string[] = [];
      values.forEach(
        (value, i) => value !== null && parts.push(`${encodeURIComponent(queryShape[i])}=${encodeBytes(value)}`),
      );
      for (const [key, value] of extra) parts.push(`${encodeBytes(key)}=${encodeBytes(value)}`);
      if (raw) parts.push(raw);
      return parts.length ? `?${parts.join('&')}` : '';
    });
  const body: fc.Arbitrary<Buffer | undefined> =
    operation.bodyKind === 'json'
      ? jsonBody(operation, known)
      : operation.bodyKind === 'zip'
        ? fc.oneof(
            fc.constantFrom(...zips),
            fc.constantFrom(...zips).chain((zip) => fc.nat(zip.length).map((n) => zip.subarray(0, n))),
            fc.uint8Array({ maxLength: 2000 }).map((b) => Buffer.from(b)),
          )
        : fc.option(fc.constantFrom(Buffer.from('{}'), Buffer.from('garbage')), { freq: 8 }).map((b) => b ?? undefined);
  const method = fc.oneof(
    { weight: 12, arbitrary: fc.constant(operation.method as string) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS') },
  );
  const type =
    operation.bodyKind === 'zip'
      ? fc.oneof({ weight: 6, arbitrary: fc.constant('application/zip') }, { weight: 1, arbitrary: contentType })
      : contentType;
  return fc
    .record({ method, params, query, body, auth: authorization, type, extra: extraHeaders, chunked: fc.boolean() })
    .map((r) => {
      const headers: Record<string, string> = { ...r.extra };
      if (r.auth !== undefined) headers.authorization = r.auth;
      if (r.body !== undefined) {
        if (r.type !== '') headers['content-type'] = r.type;
        // Node's client chunks a body by default only for some methods: say it, or the body would go unframed.
        if (r.chunked) headers['transfer-encoding'] = 'chunked';
        else headers['content-length'] = String(r.body.length);
        if (operation.bodyKind === 'zip' && !('x-content-sha256' in headers) && r.chunked) {
          headers['x-content-sha256'] = createHash('sha256').update(r.body).digest('hex');
        }
      }
      const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => r.params[name]);
      return describeRequest({ method: r.method, path: path + r.query, headers, body: r.body });
    });
}

/** A counterexample short enough to read: long values cut, the body as its length and start. */
function describeRequest(req: FuzzRequest): FuzzRequest {
  const cut = (text: string, n = 200) => (text.length > n ? `${text.slice(0, n)}…(${text.length} chars)` : text);
  return Object.assign(req, {
    [fc.toStringMethod]: () =>
      JSON.stringify({
        method: req.method,
        path: cut(req.path),
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, cut(v, 80)])),
        body: req.body && { bytes: req.body.length, start: cut(req.body.toString('latin1'), 300) },
      }),
  });
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * Sends one request on a kept-alive connection. A connection the server closed while idle (its 5 s
 * keep-alive timeout) can be picked from the pool just as it closes: like any HTTP client, the request
 * is then sent again once, on a new connection, where a drop would be the server's doing.
 * An upload refused before its body is read (415, 413, 403: DESIGN.md §3) is answered at once and the
 * connection closed; a client still writing its body can then get a reset before it reads the answer.
 * Such a request is sent again with its headers alone (`headersOnly`): the server must answer it without
 * the body, and that answer is the one checked; a request the server needed the body for hangs there
 * and fails.
 */
function send(req: FuzzRequest, retry: 'fresh' | 'headersOnly' | undefined = undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url);
    const timer = setTimeout(() => {
      outgoing.destroy();
      reject(
        new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms (a hang) to ${req.method} ${req.path.slice(0, 200)}`),
      );
    }, REQUEST_TIMEOUT_MS);
    let answered = false;
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: req.headers,
        agent: retry ? false : agent,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          clearTimeout(timer);
          if (retry === 'headersOnly') outgoing.destroy(); // its body is never sent
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) });
        });
        res.on('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return; // an early answer (413, 415…) closes the connection while the body is still being sent
      clearTimeout(timer);
      if (outgoing.reusedSocket && !retry) return void send(req, 'fresh').then(resolve, reject);
      const resetWhileSending = req.body !== undefined && (error.code === 'EPIPE' || error.code === 'ECONNRESET');
      if (resetWhileSending && retry !== 'headersOnly') return void send(req, 'headersOnly').then(resolve, reject);
      reject(
        new Error(`connection dropped without an answer to ${req.method} ${req.path.slice(0, 200)}: ${error.message}`),
      );
    });
    if (retry === 'headersOnly') outgoing.flushHeaders();
    else if (req.body) outgoing.end(req.body);
    else outgoing.end();
  });
}

/** Statuses allowed with each error code: its own, 431 for headers over Node's limit (answered by the clientError handler), and 417 for an Expect header we do not understand. */
function checkError(status: number, body: Buffer, what: string): void {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new Error(`${what}: a ${status} that is not JSON: ${body.toString('utf8').slice(0, 200)}`);
  }
  const parsed = ErrorBody.safeParse(json);
  if (!parsed.success)
    throw new Error(`${what}: a ${status} not in the error shape: ${body.toString('utf8').slice(0, 200)}`);
  const code = parsed.data.error as keyof typeof ERROR_STATUS;
  const expected =
    (status === 431 && code === 'payload_too_large') || (status === 417 && code === 'invalid_request')
      ? status
      : ERROR_STATUS[code];
  if (expected !== status) throw new Error(`${what}: status ${status} with code ${code} (which goes with ${expected})`);
}

function check(operation: Operation, req: FuzzRequest, answer: Answer): void {
  const what = `${req.method} ${req.path.slice(0, 200)}`;
  counts.byStatus.set(answer.status, (counts.byStatus.get(answer.status) ?? 0) + 1);

  if (answer.status >= 500) throw new Error(`${what}: ${answer.status} ${answer.body.toString('utf8').slice(0, 300)}`);
  if (answer.status >= 400) {
    if (req.method !== 'HEAD') checkError(answer.status, answer.body, what);
    if (answer.body.length > ERROR_ANSWER_MAX)
      throw new Error(`${what}: a ${answer.status} of ${answer.body.length} bytes (at most ${ERROR_ANSWER_MAX})`);
    return;
  }
  if (answer.status === 304) {
    if (operation.id !== 'downloadArchive' || !req.headers['if-none-match']) throw new Error(`${what}: unexpected 304`);
    return;
  }
  if (answer.status < 200 || answer.status >= 300) throw new Error(`${what}: unexpected status ${answer.status}`);
  // A success of the operation itself has its response shape. A path with a dot segment (`..`, `%2e`)
  // is resolved as URLs are (RFC 3986 §5.2.4), so it may reach another route: only the rules above hold.
  const resolvesElsewhere = req.path
    .split('?')[0]
    .split('/')
    .some((part) => /^(\.|%2e){1,2}$/i.test(part));
  if (
    req.method === operation.method &&
    answer.status === operation.status &&
    operation.responseKind === 'json' &&
    !resolvesElsewhere
  ) {
    const parsed = operation.response.safeParse(JSON.parse(answer.body.toString('utf8')));
    if (!parsed.success)
      throw new Error(
        `${what}: a ${answer.status} whose body is not a ${operation.id} response: ${parsed.error.message.slice(0, 300)}`,
      );
  }
}

/** Undoes what the fuzzer may have done to the fixtures it relies on (bans, a removed owner). */
async function restore(): Promise<void> {
  const admin = { token: tokens.admin };
  await call(server.url, 'PUT', '/publishers/fuzz-pub', { ...admin, body: { status: 'PublisherStatusActive' } });
  await call(server.url, 'PUT', '/publishers/other-pub', { ...admin, body: { status: 'PublisherStatusActive' } });
  await call(server.url, 'POST', '/publishers/fuzz-pub/members', {
    ...admin,
    body: { user_id: owner.id, role: 'owner' },
  });
  await call(server.url, 'POST', '/publishers/fuzz-pub/members', {
    ...admin,
    body: { user_id: member.id, role: 'member' },
  });
  await call(server.url, 'POST', '/users/me/invitations/fuzz-pub/accept', { token: member.token }); // when the fuzzer removed it
  await call(server.url, 'PUT', '/publishers/fuzz-pub/nodes/fuzz-node', {
    ...admin,
    body: { status: 'NodeStatusActive' },
  });
}

function assertServerHealthy(): Promise<void> {
  return (async () => {
    expect(child.alive(), 'the server process is alive').toBe(true);
    const health = await call(server.url, 'GET', '/healthz');
    expect(health.status).toBe(200);
    const internal = child
      .stderr()
      .split('\n')
      .filter((line) => /internal error| 5\d\d [\d.]+ms /.test(line));
    expect(internal, 'internal errors in the server log').toEqual([]);
  })();
}

describe('fuzzing every operation of the contract', () => {
  it('covers every operation', () => {
    expect(allOperations.length).toBeGreaterThanOrEqual(30);
    expect(ids.tasks).toHaveLength(3);
    expect(NASTY_STRINGS.length).toBeGreaterThan(20);
  });

  for (const operation of allOperations) {
    it(`${operation.method} ${operation.path} (${operation.id})`, {
      timeout: 60_000 + RUNS_PER_OPERATION * 100,
    }, async () => {
      await restore();
      let sent = 0;
      let withoutToken = 0;
      await fc.assert(
        fc.asyncProperty(requestFor(operation), async (req) => {
          if (++sent % 100 === 0) await restore();
          counts.http++;
          if (!req.headers.authorization) {
            counts.withoutToken++;
            withoutToken++;
          }
          check(operation, req, await send(req));
        }),
        { numRuns: RUNS_PER_OPERATION, seed: SEED },
      );
      // DESIGN's invariant holds with and without a token: both were sent to every operation.
      expect(withoutToken).toBeGreaterThan(0);
      expect(withoutToken).toBeLessThan(sent);
      await assertServerHealthy();
    });
  }
});

// ---- raw HTTP on a socket ----

interface RawResponse {
  status: number;
  body: string;
}
interface RawAnswer {
  responses: RawResponse[];
  text: string;
  error?: string;
}

/** The responses in what a server sent on one connection, framed by Content-Length or chunks. */
function parseResponses(text: string): RawResponse[] {
  const responses: RawResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const head = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n/.exec(text.slice(at));
    if (!head) break;
    const status = Number(head[1]);
    at += head[0].length;
    const length = /^content-length: *(\d+)/im.exec(head[2]);
    let body = '';
    // no body: 1xx, 204, 304, or a HEAD's answer (the next answer follows at once)
    if (status < 200 || status === 204 || status === 304 || text.startsWith('HTTP/1.', at)) body = '';
    else if (length && !text.startsWith('HTTP/', at)) body = text.slice(at, at + Number(length[1]));
    else if (/^transfer-encoding: *chunked/im.test(head[2])) {
      for (;;) {
        const size = /^([0-9a-f]+)[^\r\n]*\r\n/i.exec(text.slice(at));
        if (!size) break;
        at += size[0].length;
        const n = parseInt(size[1], 16);
        body += text.slice(at, at + n);
        at += n + 2;
        if (n === 0) break;
      }
    } else if (!length) body = text.slice(at);
    at += length && !text.startsWith('HTTP/', at) ? Number(length[1]) : 0;
    responses.push({ status, body });
  }
  return responses;
}

/** Writes the bytes, half-closes (or not), and reads until the server closes. */
function sendRaw(bytes: Buffer, halfClose: boolean): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let error: string | undefined;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no end within ${REQUEST_TIMEOUT_MS} ms (a hang) for ${JSON.stringify(bytes.toString('latin1').slice(0, 200))}`,
        ),
      );
    }, REQUEST_TIMEOUT_MS);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (e) => (error = (e as NodeJS.ErrnoException).code ?? e.message));
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ responses: parseResponses(text), text, error });
    });
    socket.write(bytes, () => {
      if (halfClose) socket.end();
    });
  });
}

function checkRaw(message: string, answer: RawAnswer): void {
  // What went on the wire: each character as one latin1 byte (U+C50A is sent as 0x0A, a line feed).
  const wire = Buffer.from(message, 'latin1').toString('latin1');
  const what = JSON.stringify(wire.slice(0, 300));
  const finals = answer.responses.filter((response) => response.status >= 200);
  for (const { status } of finals)
    if (status >= 500) throw new Error(`${what}: answered ${status}: ${answer.text.slice(0, 300)}`);
  // Something that starts a request gets an answer: a dropped connection is a failure.
  // One exception, Node's own: a request it parses with the method PRI (the HTTP/2 preface's; only an
  // HTTP/0.9 request line without a version gets that far) has its connection destroyed on purpose.
  const priRequest = /^\s*PRI [^\r\n ]+\s*\r?\n/.test(wire) && !/^\s*PRI [^\r\n]* HTTP\//.test(wire);
  if (finals.length === 0 && /\S/.test(wire) && !priRequest) {
    throw new Error(
      `${what}: the connection closed without an answer${answer.error ? ` (${answer.error})` : ''}: ${JSON.stringify(answer.text.slice(0, 200))}`,
    );
  }
  // Error answers are in the error shape (a HEAD's has no body to check): never Node's empty 400.
  const head = /^\s*HEAD /.test(wire);
  for (const { status, body } of finals)
    if (status >= 400 && (body !== '' || !head)) checkError(status, Buffer.from(body, 'latin1'), what);
}

describe('raw malformed HTTP on a socket', () => {
  const paths = () =>
    allOperations.map((operation) =>
      buildPath(operation.path, Object.fromEntries([...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], 'x']))),
    );
  const property = (halfClose: boolean) =>
    fc.asyncProperty(fc.array(rawMessages(paths()), { minLength: 8, maxLength: 8 }), async (batch) => {
      await Promise.all(
        batch.map(async (message) => {
          counts.raw++;
          checkRaw(message, await sendRaw(Buffer.from(message, 'latin1'), halfClose));
        }),
      );
    });

  it('answers every message, in the error shape, and keeps serving', {
    timeout: 120_000 + RAW_RUNS * 1_000,
  }, async () => {
    // written, then half-closed: the server sees the end of what it was sent
    await fc.assert(property(true), { numRuns: RAW_RUNS, seed: SEED });
    await assertServerHealthy();
  });

  it('answers messages left unfinished on an open socket, at the latest when its timeouts expire (408)', {
    timeout: 60_000 + RAW_OPEN_RUNS * 5_000,
  }, async () => {
    await fc.assert(property(false), { numRuns: RAW_OPEN_RUNS, seed: SEED });
    await assertServerHealthy();
  });
});

describe('after the fuzzing', () => {
  it('the server is alive, answers, and logged no internal error', async () => {
    await assertServerHealthy();
    const statuses = [...counts.byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ');
    figure(
      'fuzz.http_requests',
      counts.http,
      `${allOperations.length} operations × ${RUNS_PER_OPERATION}, ${counts.withoutToken} of them without a token; statuses ${statuses}`,
    );
    figure(
      'fuzz.raw_messages',
      counts.raw,
      `raw HTTP messages on a socket (${RAW_RUNS * 8} half-closed, ${RAW_OPEN_RUNS * 8} left open)`,
    );
    figure(
      'fuzz.requests',
      counts.http + counts.raw,
      `seed ${SEED}; ${callbacksReceived} callbacks delivered to the loopback receiver`,
    );
    expect(counts.http).toBe(allOperations.length * RUNS_PER_OPERATION);
  });
});
