// The authorization table of DESIGN.md §2, row by row, for every mutating operation: no token,
// unknown token, another publisher's PAT, a stranger, a member, this publisher's PAT, an owner, the
// admin. Then bans.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import {
  addMember,
  client,
  createPat,
  createPublisher,
  createUser,
  expectError,
  publish,
  type Reply,
} from '../server/fixtures.js';

let server: TestServer;
let api: ReturnType<typeof client>;
const tokens: Record<string, string | undefined> = {};
let memberId = '';

const PRINCIPALS = ['none', 'unknown', 'otherPat', 'stranger', 'member', 'pat', 'owner', 'admin'] as const;
type PrincipalName = (typeof PRINCIPALS)[number];

beforeAll(async () => {
  server = await startServer();
  api = client(server);
  const owner = await createUser(server, 'owner');
  const member = await createUser(server, 'member');
  const stranger = await createUser(server, 'stranger');
  const other = await createUser(server, 'other');
  memberId = member.id;
  await createPublisher(server, owner, 'acme');
  await createPublisher(server, other, 'other-co');
  await addMember(server, owner, 'acme', member);
  Object.assign(tokens, {
    none: undefined,
    unknown: 'nrg_u_thisTokenWasNeverIssuedByTheServerAtAll00000',
    otherPat: await createPat(server, other, 'other-co'),
    stranger: stranger.token,
    member: member.token,
    pat: await createPat(server, owner, 'acme'),
    owner: owner.token,
    admin: server.adminToken,
  });
  expect((await publish(server, owner.token, 'acme', 'widget', '1.0.0')).status).toBe(201);
});
afterAll(() => server.close());

let sequence = 0;
const next = () => ++sequence;

/** Each operation, and who may do it; everyone else gets 401 (no or unknown token) or 403. */
const operations: {
  name: string;
  allowed: PrincipalName[];
  run: (token: string | undefined) => Promise<Reply>;
  success: number;
}[] = [
  {
    name: 'publish',
    allowed: ['member', 'pat', 'owner', 'admin'],
    success: 201,
    run: (token) =>
      api.post('/publishers/acme/nodes/widget/versions', {
        token,
        body: { node_version: { version: `2.0.${next()}` } },
      }),
  },
  {
    name: 'update node',
    allowed: ['member', 'pat', 'owner', 'admin'],
    success: 200,
    run: (token) => api.put('/publishers/acme/nodes/widget', { token, body: { description: `d${next()}` } }),
  },
  {
    name: 'update version',
    allowed: ['member', 'pat', 'owner', 'admin'],
    success: 200,
    run: (token) =>
      api.put('/publishers/acme/nodes/widget/versions/1.0.0', { token, body: { changelog: `c${next()}` } }),
  },
  {
    name: 'update publisher',
    allowed: ['owner', 'admin'],
    success: 200,
    run: (token) => api.put('/publishers/acme', { token, body: { description: `p${next()}` } }),
  },
  {
    name: 'create publisher token',
    allowed: ['owner', 'admin'],
    success: 201,
    run: (token) => api.post('/publishers/acme/tokens', { token, body: { name: `t${next()}` } }),
  },
  {
    name: 'list publisher tokens',
    allowed: ['owner', 'admin'],
    success: 200,
    run: (token) => api.get('/publishers/acme/tokens', { token }),
  },
  {
    name: 'add member',
    allowed: ['owner', 'admin'],
    success: 201,
    run: (token) => api.post('/publishers/acme/members', { token, body: { user_id: memberId, role: 'member' } }),
  },
  {
    name: 'review',
    allowed: ['stranger', 'admin', 'otherPat'],
    success: 200,
    run: (token) => api.post('/nodes/widget/reviews?star=5', { token }),
  },
  {
    name: 'create publisher',
    allowed: ['stranger', 'member', 'owner', 'admin'],
    success: 201,
    run: (token) => api.post('/publishers', { token, body: { id: `pub-${next()}` } }),
  },
  {
    name: 'create user',
    allowed: ['admin'],
    success: 201,
    run: (token) => api.post('/users', { token, body: { name: `u${next()}` } }),
  },
];

describe.each(operations)('$name', ({ allowed, run, success }) => {
  it.each(PRINCIPALS)('as %s', async (principal) => {
    const reply = await run(tokens[principal]);
    if (allowed.includes(principal)) expect(reply.status, reply.text).toBe(success);
    else if (principal === 'none' || principal === 'unknown') expectError(reply, 401, 'unauthorized');
    else expectError(reply, 403, 'forbidden');
  });
});

describe('remove member', () => {
  it('only owners and the admin may remove members', async () => {
    const extra = await createUser(server);
    for (const principal of ['none', 'unknown', 'otherPat', 'stranger', 'member', 'pat'] as const) {
      await api.post('/publishers/acme/members', { token: tokens.owner, body: { user_id: extra.id } });
      const reply = await api.delete(`/publishers/acme/members/${extra.id}`, { token: tokens[principal] });
      if (principal === 'none' || principal === 'unknown') expectError(reply, 401, 'unauthorized');
      else expectError(reply, 403, 'forbidden');
    }
    expect((await api.delete(`/publishers/acme/members/${extra.id}`, { token: tokens.owner })).status).toBe(204);
    await api.post('/publishers/acme/members', { token: tokens.owner, body: { user_id: extra.id } });
    expect((await api.delete(`/publishers/acme/members/${extra.id}`, { token: tokens.admin })).status).toBe(204);
  });
});

describe('publish credential in the body', () => {
  it('accepts personal_access_token in the body alone', async () => {
    const reply = await api.post('/publishers/acme/nodes/widget/versions', {
      body: { personal_access_token: tokens.pat, node_version: { version: '3.0.0' } },
    });
    expect(reply.status, reply.text).toBe(201);
  });

  it('is 400 when the header and the body carry different tokens; an unknown header token is 401 before the body is read', async () => {
    const reply = await api.post('/publishers/acme/nodes/widget/versions', {
      token: tokens.owner,
      body: { personal_access_token: 'nrg_pat_unknownButItDoesNotMatter', node_version: { version: '3.0.1' } },
    });
    expectError(reply, 400, 'invalid_request');
    expect(reply.body.message).toContain('personal_access_token');
    // the header token is checked first: the body of a stranger is never read
    const both = await api.post('/publishers/acme/nodes/widget/versions', {
      token: 'nrg_u_a',
      body: { personal_access_token: 'nrg_pat_b', node_version: { version: '3.0.1' } },
    });
    expectError(both, 401, 'unauthorized');
  });

  it('accepts the same token in both places, and 401 for an unknown body token', async () => {
    const same = await api.post('/publishers/acme/nodes/widget/versions', {
      token: tokens.pat,
      body: { personal_access_token: tokens.pat, node_version: { version: '3.0.2' } },
    });
    expect(same.status, same.text).toBe(201);
    const unknown = await api.post('/publishers/acme/nodes/widget/versions', {
      body: { personal_access_token: 'nrg_pat_neverIssued', node_version: { version: '3.0.3' } },
    });
    expectError(unknown, 401, 'unauthorized');
  });
});

describe('bans', () => {
  it('a banned publisher answers mutations with 403 banned, except the admin; strangers still get forbidden', async () => {
    const owner = await createUser(server);
    const stranger = await createUser(server);
    await createPublisher(server, owner, 'shady');
    const pat = await createPat(server, owner, 'shady');
    expect((await publish(server, owner.token, 'shady', 'shady-node', '1.0.0')).status).toBe(201);

    // only an admin may ban
    expectError(
      await api.put('/publishers/shady', { token: owner.token, body: { status: 'PublisherStatusBanned' } }),
      403,
      'forbidden',
    );
    const ban = await api.put('/publishers/shady', {
      token: server.adminToken,
      body: { status: 'PublisherStatusBanned' },
    });
    expect(ban.status).toBe(200);
    expect(ban.body.status).toBe('PublisherStatusBanned');

    for (const token of [owner.token, pat]) {
      expectError(await publish(server, token, 'shady', 'shady-node', '1.0.1'), 403, 'banned');
      expectError(
        await api.put('/publishers/shady/nodes/shady-node', { token, body: { description: 'x' } }),
        403,
        'banned',
      );
      expectError(
        await api.put('/publishers/shady/nodes/shady-node/versions/1.0.0', { token, body: { deprecated: true } }),
        403,
        'banned',
      );
    }
    expectError(await api.put('/publishers/shady', { token: owner.token, body: { description: 'x' } }), 403, 'banned');
    expectError(await api.post('/publishers/shady/tokens', { token: owner.token, body: { name: 'x' } }), 403, 'banned');
    expectError(
      await api.post('/publishers/shady/members', { token: owner.token, body: { user_id: stranger.id } }),
      403,
      'banned',
    );
    // the owner may not lift the ban either (a different status is admin-only, and the publisher is banned)
    expectError(
      await api.put('/publishers/shady', { token: owner.token, body: { status: 'PublisherStatusActive' } }),
      403,
      'banned',
    );
    expectError(await api.post('/nodes/shady-node/reviews?star=1', { token: stranger.token }), 403, 'banned');
    // forbidden comes before banned
    expectError(await publish(server, stranger.token, 'shady', 'shady-node', '1.0.1'), 403, 'forbidden');
    // the hint says who can lift it (the CLI's default 403 hint, "check that your token belongs to this publisher", misled even an anonymous reader)
    for (const reply of [
      await api.get('/nodes/shady-node'),
      await api.put('/publishers/shady/nodes/shady-node', { token: owner.token, body: { description: 'x' } }),
    ]) {
      expectError(reply, 403, 'banned');
      expect(reply.body.hint).toBe('a registry admin banned it: only an admin can lift the ban');
    }

    // the admin still may
    expect((await publish(server, server.adminToken, 'shady', 'shady-node', '1.0.2')).status).toBe(201);
    expect(
      (await api.put('/publishers/shady', { token: server.adminToken, body: { status: 'PublisherStatusActive' } }))
        .status,
    ).toBe(200);
    expect((await publish(server, owner.token, 'shady', 'shady-node', '1.0.3')).status).toBe(201);
  });

  it('a banned node is 403 banned to reads except for admins, and to every mutation except the admin', async () => {
    const owner = await createUser(server);
    const stranger = await createUser(server);
    await createPublisher(server, owner, 'bannable');
    expect((await publish(server, owner.token, 'bannable', 'bad-node', '1.0.0')).status).toBe(201);

    expectError(
      await api.put('/publishers/bannable/nodes/bad-node', {
        token: owner.token,
        body: { status: 'NodeStatusBanned' },
      }),
      403,
      'forbidden',
    );
    const ban = await api.put('/publishers/bannable/nodes/bad-node', {
      token: server.adminToken,
      body: { status: 'NodeStatusBanned', status_detail: 'malware' },
    });
    expect(ban.status, ban.text).toBe(200);
    expect(ban.body).toMatchObject({ status: 'NodeStatusBanned', status_detail: 'malware' });

    expectError(await api.get('/nodes/bad-node'), 403, 'banned');
    expectError(await api.get('/nodes/bad-node', { token: owner.token }), 403, 'banned');
    expectError(await api.get('/nodes/bad-node/versions'), 403, 'banned');
    expectError(await api.get('/nodes/bad-node/install'), 403, 'banned');
    expect((await api.get('/nodes/bad-node', { token: server.adminToken })).status).toBe(200);

    expectError(await publish(server, owner.token, 'bannable', 'bad-node', '1.0.1'), 403, 'banned');
    expectError(
      await api.put('/publishers/bannable/nodes/bad-node', {
        token: owner.token,
        body: { status: 'NodeStatusActive' },
      }),
      403,
      'banned',
    );
    expectError(
      await api.put('/publishers/bannable/nodes/bad-node/versions/1.0.0', {
        token: owner.token,
        body: { changelog: 'x' },
      }),
      403,
      'banned',
    );
    expectError(await api.post('/nodes/bad-node/reviews?star=5', { token: stranger.token }), 403, 'banned');
    // a banned node of its publisher is no longer listed to the public, but to the admin
    expect((await api.get('/publishers/bannable/nodes')).body).toEqual([]);
    expect(
      (await api.get('/publishers/bannable/nodes', { token: server.adminToken })).body.map((n: { id: string }) => n.id),
    ).toEqual(['bad-node']);

    const unban = await api.put('/publishers/bannable/nodes/bad-node', {
      token: server.adminToken,
      body: { status: 'NodeStatusActive' },
    });
    expect(unban.body.status).toBe('NodeStatusActive');
    expect((await api.get('/nodes/bad-node')).status).toBe(200);
  });
});
