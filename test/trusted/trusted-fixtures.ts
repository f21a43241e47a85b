// A registry that trusts the stand-in issuer, a publisher with a trust, and the calls the tests share.
import { expect } from 'vitest';
import type { RegistryServerOptions } from '../../src/server/index.js';
import { startServer, type TestServer } from '../helpers.js';
import { call, createPublisher, createUser, type Reply, type TestUser } from '../server/fixtures.js';
import { startIssuer, type StandInIssuer } from './oidc-issuer.js';

export interface Trusted {
  issuer: StandInIssuer;
  server: TestServer;
  owner: TestUser;
  publisherId: string;
  close(): Promise<void>;
}

export async function trustedRegistry(options: Partial<RegistryServerOptions> = {}): Promise<Trusted> {
  const issuer = await startIssuer();
  const server = await startServer({
    oidcCooldown: 0,
    ...options,
    oidcIssuers: { github: issuer.url, ...options.oidcIssuers },
  });
  const owner = await createUser(server);
  const publisherId = 'octo';
  await createPublisher(server, owner, publisherId);
  return {
    issuer,
    server,
    owner,
    publisherId,
    close: async () => {
      await server.close();
      await issuer.close();
    },
  };
}

export async function addTrust(t: Trusted, body: Record<string, unknown>): Promise<Reply> {
  return call(t.server.url, 'POST', `/publishers/${t.publisherId}/trusts`, { token: t.owner.token, body });
}

export const exchange = (t: Trusted, token: string, extra: Record<string, unknown> = {}) =>
  call(t.server.url, 'POST', '/oidc/exchange', { body: { token, publisher_id: t.publisherId, ...extra } });

/** How many rows a table of the registry's SQLite database holds. */
export function rows(t: Trusted, table: 'oidc_exchanges' | 'versions' | 'nodes'): number {
  const row = t.server.server.db!.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number };
  return row.n;
}

/** A 4xx in the error shape whose details name `token.<claim>`. */
export function expectClaimRefused(reply: Reply, claim: string): void {
  expect(reply.status, reply.text).toBeGreaterThanOrEqual(400);
  expect(reply.status, reply.text).toBeLessThan(500);
  const named: Record<string, string> = { workflow_ref: 'workflow', kid: 'key' };
  expect(reply.body.message, reply.text).toContain(named[claim] ?? claim);
  expect(reply.body.details?.map((d: { path: string }) => d.path)).toContain(`token.${claim}`);
}
