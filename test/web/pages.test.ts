// The web pages over HTTP, without a browser: a browser's Accept gets a page at each page path, every
// other client gets the same JSON as before; pages escape what publishers wrote, carry a strict CSP,
// stay small, and show findings to the publisher's members only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_ACCEPT, webClient } from './web-client.js';
import { startServer, type TestServer } from '../helpers.js';
import {
  client,
  createPublisher,
  createUser,
  makeZip,
  publish,
  publishAndUpload,
  uploadTo,
  type TestUser,
} from '../server/fixtures.js';

const BROWSER = BROWSER_ACCEPT;
const HOSTILE =
  '<script>window.pwned=1</script>"><img src=x onerror="window.pwned=1"><a href="javascript:window.pwned=1">x</a>\u202Eevil';

let server: TestServer;
let owner: TestUser;
let stranger: TestUser;

beforeAll(async () => {
  server = await startServer();
  owner = await createUser(server, 'owner');
  stranger = await createUser(server, 'stranger');
  await createPublisher(server, owner, 'acme', { description: HOSTILE });
  await publishAndUpload(server, owner.token, 'acme', 'hostile', '1.0.0', {
    node: {
      name: HOSTILE,
      description: HOSTILE,
      tags: ['<b>tag</b>', '\u202Etag'],
      repository: 'http://insecure.example.org/repo',
      supported_os: ['linux'],
    },
  });
  await publishAndUpload(server, owner.token, 'acme', 'plain', '2.0.0', {
    node: { name: 'Plain', repository: 'https://example.org/plain', supported_os: ['windows'] },
  });
  const published = await publish(server, owner.token, 'acme', 'risky', '1.0.0');
  const risky = await makeZip({ 'run.py': 'import subprocess\nsubprocess.run(input(), shell=True)\n' });
  expect((await uploadTo(published.body.signedUrl, risky)).body.status).toBe('NodeVersionStatusFlagged');
});
afterAll(() => server.close());

async function signedIn(user: TestUser) {
  const web = webClient(server);
  await web.signIn(user.token);
  return (await web.get('/nodes/risky/versions/1.0.0')).text;
}

const page = (path: string, token?: string) => client(server).get(path, { token, headers: { accept: BROWSER } });

describe('content negotiation', () => {
  it('JSON clients get what they got before at every page path; browsers get a page', async () => {
    const api = client(server);
    for (const path of [
      '/',
      '/nodes',
      '/nodes/plain',
      '/nodes/plain/versions/2.0.0',
      '/publishers/acme',
      '/nodes/missing',
    ]) {
      const plain = await api.get(path);
      for (const accept of [
        'application/json',
        '*/*',
        'application/json, text/html',
        'text/html;q=0.5, application/json',
      ]) {
        const asked = await api.get(path, { headers: { accept } });
        expect({ path, accept, status: asked.status, type: asked.headers.get('content-type') }).toEqual({
          path,
          accept,
          status: plain.status,
          type: plain.headers.get('content-type'),
        });
        if (path !== '/nodes/plain') expect(asked.body).toEqual(plain.body);
      }
      expect(plain.headers.get('content-type')).toMatch(/application\/json/);
      const html = await page(path);
      expect(html.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
      expect(html.status).toBe(path === '/nodes/missing' ? 404 : 200);
    }
    // a JSON 404 stays one at / and at a path with no page
    expect((await api.get('/')).status).toBe(404);
    expect((await api.post('/nodes', { headers: { accept: BROWSER } })).headers.get('content-type')).toMatch(/json/);
  });

  it('serves its own stylesheet and script, and every page names them under a strict CSP', async () => {
    const home = await page('/');
    const csp = home.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const assets = [...home.text.matchAll(/(?:href|src)="(\/web\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets).toHaveLength(2);
    for (const path of assets) {
      const asset = await client(server).get(path);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toMatch(/text\/(css|javascript)/);
      expect(asset.text.length).toBeLessThan(8 * 1024);
    }
    expect(home.text).not.toMatch(/<script>|<style>|style=|onclick=/);
  });
});

describe('pages', () => {
  it('escape what publishers wrote, link only https repositories, and make bidi controls visible', async () => {
    for (const path of [
      '/',
      '/nodes/hostile',
      '/nodes/hostile/versions/1.0.0',
      '/publishers/acme',
      '/?q=%3Cscript%3E',
    ]) {
      const html = (await page(path)).text;
      expect(html, path).not.toContain('<script>window');
      expect(html, path).not.toContain('<img');
      expect(html, path).not.toContain('\u202E');
      expect(html.length, path).toBeLessThan(100 * 1024);
    }
    const node = (await page('/nodes/hostile')).text;
    expect(node).toContain('&lt;script&gt;');
    expect(node).toContain('[U+202E]evil');
    expect(node).not.toContain('href="javascript:');
    expect(node).not.toContain('href="http://insecure.example.org/repo"');
    const plain = (await page('/nodes/plain')).text;
    expect(plain).toContain('<a href="https://example.org/plain" rel="noopener nofollow noreferrer">');
    expect(plain).toContain('comfy node install plain');
    expect(plain).toContain(`nodereg node download plain@2.0.0 --registry ${server.url}`);
  });

  it('search finds by words and filters by OS', async () => {
    expect((await page('/?q=plain')).text).toContain('href="/nodes/plain"');
    const linux = (await page('/?os=linux')).text;
    expect(linux).toContain('href="/nodes/hostile"');
    expect(linux).not.toContain('href="/nodes/plain"');
  });

  it('a version page shows findings grouped by file to members, and only the status and reason to others', async () => {
    const asOwner = await signedIn(owner);
    const asStranger = await signedIn(stranger);
    // a bearer token is no sign-in: pages know the viewer by the session alone
    expect((await page('/nodes/risky/versions/1.0.0', owner.token)).text).not.toContain('class="finding"');
    const anonymous = (await page('/nodes/risky/versions/1.0.0')).text;
    for (const html of [asStranger, anonymous]) {
      expect(html).toContain('Flagged');
      expect(html, html.slice(html.indexOf('Status:'), html.indexOf('Status:') + 300)).toContain(
        'scan: command-injection at run.py:2',
      );
      expect(html).not.toContain('class="finding"');
    }
    expect(asOwner).toContain('class="finding"');
    expect(asOwner).toContain('<code><bdi>run.py</bdi></code>');
  });

  it('a publisher page lists nodes and members without e-mails', async () => {
    const web = webClient(server);
    await web.signIn(owner.token);
    const html = (await web.get('/publishers/acme')).text;
    expect(html).toContain('href="/nodes/plain"');
    expect(html).toContain('owner');
    expect(html).not.toContain('@example.org');
  });
});
