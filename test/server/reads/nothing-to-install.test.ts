// Lists and search leave out a node with nothing to install: one whose versions are only Flagged (or
// Banned, or withdrawn). Its page and its publisher's list still show it, and it comes back once a
// version is made Active. On SQLite and on PostgreSQL (issue 37).
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabaseTarget } from '../../../src/server/backends.js';
import { startServer, type TestServer } from '../../helpers.js';
import { testPostgres } from '../../postgres.js';
import { client, createPublisher, createUser, makeZip, publish, publishAndUpload } from '../fixtures.js';

const postgresServer = testPostgres();
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
});

const backends: { name: string; start: () => Promise<TestServer> }[] = [{ name: 'SQLite', start: () => startServer() }];
if (postgresServer)
  backends.push({
    name: 'PostgreSQL',
    start: async () => {
      const url = await (await postgresServer).migratedDatabase();
      return startServer({ database: await openDatabaseTarget({ kind: 'postgres', url }) });
    },
  });

/** A high finding: the registry's scan flags the version. */
const RISKY = { '__init__.py': 'def run(text):\n    return eval(text)\n' };

describe.each(backends)('a node with nothing to install on $name', ({ start }) => {
  it('leaves the lists and search; its page and its publisher list keep it; an Active version brings it back', async () => {
    const server = await start();
    servers.push(server);
    const api = client(server);
    const owner = await createUser(server, 'hide-owner');
    await createPublisher(server, owner, 'hider');
    const node = { description: 'twinkling lights' };
    await publishAndUpload(server, owner.token, 'hider', 'shown-node', '1.0.0', { node });
    const flagged = await publishAndUpload(
      server,
      owner.token,
      'hider',
      'flagged-node',
      '1.0.0',
      { node },
      await makeZip(RISKY),
    );
    expect(flagged.status).toBe('NodeVersionStatusFlagged');
    // Registered, its archive still to come: it stays listed, as before.
    expect((await publish(server, owner.token, 'hider', 'pending-node', '1.0.0', { node })).status).toBe(201);

    const listed = async () => {
      const search = (await api.get('/nodes/search?q=twinkling')).body;
      const list = (await api.get('/nodes?limit=100')).body;
      const ids = (nodes: { id: string }[]) => nodes.map((n) => n.id).sort();
      return { search: ids(search.nodes), searchTotal: search.total, list: ids(list.nodes), listTotal: list.total };
    };
    expect(await listed()).toEqual({
      search: ['pending-node', 'shown-node'],
      searchTotal: 2,
      list: ['pending-node', 'shown-node'],
      listTotal: 2,
    });
    // Where DESIGN.md shows nodes of any status: the node's page, and its publisher's list to its members.
    expect((await api.get('/nodes/flagged-node')).status).toBe(200);
    const own = await api.get('/publishers/hider/nodes', { token: owner.token });
    expect(own.body.map((n: { id: string }) => n.id)).toContain('flagged-node');

    const setStatus = (status: string) =>
      api.put('/publishers/hider/nodes/flagged-node/versions/1.0.0', {
        token: server.adminToken,
        body: { status, status_reason: 'reviewed' },
      });
    expect((await setStatus('NodeVersionStatusActive')).status).toBe(200);
    expect(await listed()).toMatchObject({ searchTotal: 3, listTotal: 3 });
    expect((await listed()).search).toContain('flagged-node');
    expect((await setStatus('NodeVersionStatusBanned')).status).toBe(200);
    expect(await listed()).toMatchObject({ search: ['pending-node', 'shown-node'], searchTotal: 2, listTotal: 2 });
  });
});
