// The pages in a real browser (Debian's chromium through playwright-core, one launch for the file):
// search, open a node, copy its install command; sign in and see a Flagged version's findings as its
// publisher but not as a stranger; ask for a re-review and approve it as admin, after which the status
// and history show on the page and in the API; a hostile seed runs no script. Screenshots of the home,
// node and review-queue pages go to test-results/screenshots (CI keeps the folder).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers.js';
import {
  client,
  createPublisher,
  createUser,
  makeZip,
  publish,
  publishAndUpload,
  type TestUser,
  uploadTo,
} from '../server/fixtures.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = resolve(import.meta.dirname, '../../test-results/screenshots');
const PAYLOAD = (n: number) =>
  `<script>window.pwned=${n}</script>"><img src=x onerror="window.pwned=${n}"><a href="javascript:window.pwned=${n}">x</a>\u202Eevil`;

let server: TestServer;
let browser: Browser;
let browserTmp: string;
let owner: TestUser;
let stranger: TestUser;

beforeAll(async () => {
  // No skip: a browser that cannot start fails the file (.ci/run installs chromium).
  // Chromium's singleton socket lives under TMPDIR and must fit a Unix socket path (108 bytes): the
  // run's nested temp dirs are too deep for it, so the browser gets a short one of its own.
  browserTmp = mkdtempSync('/tmp/nrb-');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox'],
    env: { ...process.env, TMPDIR: browserTmp },
  });
  server = await startServer();
  owner = await createUser(server, 'olga');
  stranger = await createUser(server, 'sam');
  await createPublisher(server, owner, 'acme', { description: PAYLOAD(1) });
  await publishAndUpload(server, owner.token, 'acme', 'image-tools', '1.2.0', {
    node: {
      name: 'Image Tools',
      description: 'Crop, resize and tile images inside a workflow.',
      tags: ['image', 'utility'],
      repository: 'https://example.org/acme/image-tools',
      license: 'MIT',
      supported_os: ['linux', 'windows'],
    },
  });
  await publishAndUpload(server, owner.token, 'acme', 'hostile', '1.0.0', {
    node: { name: PAYLOAD(2), description: PAYLOAD(3), tags: ['<b>x</b>', '\u202Etag'] },
    node_version: { changelog: PAYLOAD(4) },
  });
  const published = await publish(server, owner.token, 'acme', 'risky', '1.0.0');
  const zip = await makeZip({ 'run.py': 'import subprocess\nsubprocess.run(input(), shell=True)\n' });
  expect((await uploadTo(published.body.signedUrl, zip)).body.status).toBe('NodeVersionStatusFlagged');
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (browserTmp) rmSync(browserTmp, { recursive: true, force: true });
});

async function session(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 720 }, colorScheme: 'light' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  return { context, page: await context.newPage() };
}

async function signIn(page: Page, token: string) {
  await page.goto(`${server.url}/web/sign-in`);
  await page.getByLabel('User token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${server.url}/`, { timeout: 10_000 }).catch(async (error) => {
    throw new Error(`${error}\n${page.url()}\n${await page.content()}`);
  });
}

const shot = (page: Page, name: string) => page.screenshot({ path: resolve(SCREENSHOTS, `${name}.png`) });

describe('in a browser', () => {
  it('search, open a node, copy its install command', async () => {
    const { context, page } = await session();
    await page.goto(server.url);
    await shot(page, 'home');
    await page.getByLabel('Search nodes').fill('image');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\?q=image/);
    await page.getByRole('link', { name: 'Image Tools' }).click();
    await page.waitForURL(`${server.url}/nodes/image-tools`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Image Tools');
    await shot(page, 'node');
    await page.locator('button[data-copy="install-comfy"]').click();
    // evaluated in the page, where `navigator` is the browser's (this file's types are Node's)
    const clipboard = await page.evaluate('navigator.clipboard.readText()');
    expect(clipboard).toBe('comfy node install image-tools');
    await context.close();
  });

  it('a hostile seed runs no script, under a CSP header', async () => {
    const { context, page } = await session();
    for (const path of ['/', '/?q=hostile', '/nodes/hostile', '/nodes/hostile/versions/1.0.0', '/publishers/acme']) {
      const response = await page.goto(server.url + path);
      expect(response?.headers()['content-security-policy'], path).toContain("script-src 'self'");
      await page.locator('a[href="javascript:window.pwned=2"]').count(); // the text, never a link
      expect(await page.evaluate('window.pwned'), path).toBeUndefined();
      expect(await page.locator('img').count(), path).toBe(0);
    }
    await page.goto(`${server.url}/nodes/hostile`);
    expect(await page.locator('h1').textContent()).toContain('[U+202E]evil');
    await context.close();
  });

  it('findings for the publisher, not a stranger; re-review asked, approved by an admin, shown with its history', async () => {
    const versionUrl = `${server.url}/nodes/risky/versions/1.0.0`;
    const stranger$ = await session();
    await signIn(stranger$.page, stranger.token);
    await stranger$.page.goto(versionUrl);
    await expect(stranger$.page.locator('#status-reason').textContent()).resolves.toContain('command-injection');
    expect(await stranger$.page.locator('tr.finding').count()).toBe(0);
    await stranger$.context.close();

    const owner$ = await session();
    await signIn(owner$.page, owner.token);
    await owner$.page.goto(versionUrl);
    expect(await owner$.page.locator('tr.finding').count()).toBeGreaterThan(0);
    await owner$.page.getByLabel('Message to the reviewers').fill('input() reads a file name the user chose');
    await owner$.page.getByRole('button', { name: 'Ask for a re-review' }).click();
    await owner$.page.waitForURL(versionUrl);
    await expect(owner$.page.locator('ol.history').textContent()).resolves.toContain('input() reads a file name');

    const admin$ = await session();
    await signIn(admin$.page, server.adminToken);
    await admin$.page.goto(`${server.url}/web/review`);
    await expect(admin$.page.locator('.queued').textContent()).resolves.toContain('re-review requested');
    await shot(admin$.page, 'review-queue');
    const item = admin$.page.locator('.queued').first();
    await item.getByLabel('Decision').selectOption('approve');
    await item.getByLabel('Reason the publisher reads').fill('the input is a file name; approved');
    await item.getByRole('button', { name: 'Decide' }).click();
    await admin$.page.waitForURL(`${server.url}/web/review`);
    await admin$.context.close();

    await owner$.page.goto(versionUrl);
    await expect(owner$.page.locator('p').first().textContent()).resolves.toContain('Active');
    const history = await owner$.page.locator('ol.history li').allTextContents();
    expect(history).toHaveLength(3);
    expect(history[2]).toContain('the input is a file name; approved');
    await owner$.context.close();

    const api = await client(server).get('/nodes/risky/versions/1.0.0');
    expect(api.body.status).toBe('NodeVersionStatusActive');
    expect(JSON.parse(api.body.status_reason).statusHistory).toHaveLength(3);
  }, 90_000);
});
