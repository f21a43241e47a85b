// `latest_version` is the newest Active version (DESIGN.md §12): the frontend disables install when
// there is none, so a Flagged, Banned, Deleted or Pending version must never be offered as latest, and
// `GET /nodes/{id}/install` without a version serves exactly that one. Property test over random
// status changes made by an admin through the wire.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_VERSION_STATUS } from '../../../src/contract/limits.js';
import { startServer, type TestServer } from '../../helpers.js';
import { call, createPat, createPublisher, createUser, publishAndUpload } from '../fixtures.js';

const VERSIONS = ['1.0.0', '1.1.0', '2.0.0-rc.1', '2.0.0'];

describe('latest_version', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    const owner = await createUser(server);
    await createPublisher(server, owner, 'lat');
    const pat = await createPat(server, owner, 'lat');
    for (const version of VERSIONS) await publishAndUpload(server, pat, 'lat', 'pack', version);
  });
  afterAll(() => server.close());

  const setStatus = async (version: string, status: string) => {
    const reply = await call(server.url, 'PUT', `/publishers/lat/nodes/pack/versions/${version}`, {
      token: server.adminToken,
      body: { status },
    });
    expect(reply.status, reply.text).toBe(200);
  };

  it('is the highest Active version after any status changes, and install serves it', async () => {
    const statuses = fc.constantFrom(...NODE_VERSION_STATUS);
    await fc.assert(
      fc.asyncProperty(fc.tuple(...VERSIONS.map(() => statuses)), async (chosen) => {
        for (const [i, status] of chosen.entries()) await setStatus(VERSIONS[i], status);
        const active = VERSIONS.filter((_, i) => chosen[i] === 'NodeVersionStatusActive');
        // a release before a pre-release: 2.0.0-rc.1 is latest only when no release is Active
        const releases = active.filter((v) => !v.includes('-'));
        const expected = (releases.length ? releases : active).at(-1);

        const node = await call(server.url, 'GET', '/nodes/pack');
        expect(node.body.latest_version?.version).toBe(expected);
        if (node.body.latest_version) expect(node.body.latest_version.status).toBe('NodeVersionStatusActive');
        const listed = await call(server.url, 'GET', '/nodes?limit=100');
        const inList = listed.body.nodes.find((n: { id: string }) => n.id === 'pack');
        // A node with no Active or Pending version has nothing to install: the lists leave it out.
        const kept = chosen.some((s) => s === 'NodeVersionStatusActive' || s === 'NodeVersionStatusPending');
        if (kept) expect(inList.latest_version?.version).toBe(expected);
        else expect(inList).toBeUndefined();
        const install = await call(server.url, 'GET', '/nodes/pack/install');
        if (expected)
          expect({ status: install.status, version: install.body.version }).toEqual({ status: 200, version: expected });
        else expect(install.status).toBe(404);
      }),
      { numRuns: 25, seed: 33 },
    );
  });
});
