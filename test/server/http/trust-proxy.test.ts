// `serve --trust-proxy`: behind proxies the operator names, the client address (for the access log,
// the rate limit and download counts) is the nearest untrusted one in X-Forwarded-For; from anyone
// else the header is ignored, so a client cannot choose its own address.
import { afterAll, describe, expect, it } from 'vitest';
import { addressBehind, trustedProxies } from '../../../src/server/http/client-address.js';
import { startServer, type TestServer } from '../../helpers.js';

const servers: TestServer[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

describe('addressBehind', () => {
  const trusted = trustedProxies(['127.0.0.1', '10.0.0.0/8', '::1']);

  it('reads X-Forwarded-For from the right, past trusted hops only', () => {
    expect(addressBehind('127.0.0.1', '203.0.113.9', trusted)).toBe('203.0.113.9');
    expect(addressBehind('::ffff:127.0.0.1', '203.0.113.9', trusted)).toBe('203.0.113.9');
    expect(addressBehind('::1', '203.0.113.9, 10.1.2.3', trusted)).toBe('203.0.113.9');
    // a client that writes the header itself is still the address the trusted proxy saw
    expect(addressBehind('127.0.0.1', '198.51.100.1, 203.0.113.9', trusted)).toBe('203.0.113.9');
    // every hop trusted: the leftmost
    expect(addressBehind('127.0.0.1', '10.0.0.1, 10.0.0.2', trusted)).toBe('10.0.0.1');
    // not an address: the chain stops at the last one that was
    expect(addressBehind('127.0.0.1', '203.0.113.9, nonsense', trusted)).toBe('127.0.0.1');
  });

  it('ignores the header from a peer that is not trusted, and without a list', () => {
    expect(addressBehind('203.0.113.50', '198.51.100.1', trusted)).toBe('203.0.113.50');
    expect(addressBehind('127.0.0.1', '198.51.100.1', undefined)).toBe('127.0.0.1');
  });

  it('refuses an entry that is neither an address nor a CIDR block, naming it', () => {
    for (const bad of ['10.0.0.0/33', 'proxy.example', '10.0.0.0/8/1', '::1/129', ''])
      expect(() => trustedProxies([bad]), bad).toThrow(`"${bad}" is neither an IP address nor a CIDR block`);
  });
});

describe('a registry behind a trusted proxy', () => {
  const review = (server: TestServer, forwardedFor: string) =>
    fetch(`${server.url}/nodes/anything/reviews?star=1`, {
      method: 'POST',
      headers: { 'x-forwarded-for': forwardedFor },
    });

  it('gives two clients behind it rate-limit buckets of their own, and logs their addresses', async () => {
    const lines: string[] = [];
    const server = await startServer({
      rateLimit: 2,
      trustProxy: trustedProxies(['127.0.0.1/32', '::1']),
      accessLog: (line) => lines.push(line),
    });
    servers.push(server);
    const first = [];
    for (let i = 0; i < 3; i++) first.push((await review(server, '203.0.113.1')).status);
    expect(first).toEqual([401, 401, 429]);
    expect((await review(server, '203.0.113.2')).status).toBe(401);
    expect(lines.filter((line) => line.includes(' 203.0.113.1 '))).toHaveLength(3);
    expect(lines.filter((line) => line.includes(' 203.0.113.2 '))).toHaveLength(1);
  });

  it('without --trust-proxy, a client cannot buy allowances by writing X-Forwarded-For', async () => {
    const server = await startServer({ rateLimit: 2 });
    servers.push(server);
    const answers = [];
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3'])
      answers.push((await review(server, address)).status);
    expect(answers).toEqual([401, 401, 429]);
  });
});
