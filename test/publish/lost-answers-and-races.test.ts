// A CI job whose upload's answer goes missing, or that races another job for the same version: the
// CLI in-process, CI set, against a registry on port 0 whose upload URLs lead through a
// relay on 127.0.0.1. The relay drops the answers of uploads or of the publish request (each request
// reaches the registry whole), or holds two uploads and lets the second through while the registry still checks the first.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { runCli, startServer, type TestServer } from '../helpers.js';
import { committedRepo } from '../package/fixtures.js';

let registry: TestServer;
let relay: http.Server;
let mode: 'pass' | 'drop-put-answers' | 'drop-post-answers' | 'gateway-timeout-once' | 'pair-puts' | 'pair-creates' =
  'pass';
/** Requests held in a pair- mode, each a function that sends it on. */
const held: (() => http.ClientRequest)[] = [];

beforeAll(async () => {
  relay = http.createServer((req, res) => {
    const send = () => {
      const target = new URL(registry.url);
      const forward = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          if (mode === 'gateway-timeout-once' && req.method === 'POST') {
            mode = 'pass'; // a proxy gave up waiting once, after the registry had the request
            answer.resume();
            answer.on('end', () =>
              res
                .writeHead(504, { 'content-type': 'text/html' })
                .end('<html><title>504 Gateway Time-out</title></html>'),
            );
            return;
          }
          if (mode === `drop-${req.method!.toLowerCase()}-answers`) {
            answer.resume();
            answer.on('end', () => req.socket.destroy()); // the registry has answered; the client never hears it
            return;
          }
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => res.destroy());
      req.pipe(forward);
      return forward;
    };
    const paired =
      (mode === 'pair-puts' && req.method === 'PUT') ||
      (mode === 'pair-creates' && `${req.method} ${req.url}` === 'POST /publishers');
    if (!paired) return void send();
    held.push(send);
    if (held.length < 2) return;
    const [first, second] = held.splice(0);
    // Both jobs hold an upload URL: the first upload goes, the second once the registry has the first whole.
    if (mode === 'pair-puts') first().on('finish', () => setTimeout(second, 200));
    // Both jobs found the publisher missing: the first creates it, the second tries once that is answered.
    else first().on('response', (answer) => answer.on('end', second));
  });
  await new Promise<void>((done) => relay.listen(0, '127.0.0.1', done));
  registry = await startServer({ publicUrl: `http://127.0.0.1:${(relay.address() as AddressInfo).port}` });
  const created = await runInProcess(['publisher', 'create', 'racer'], { env: env() });
  expect(created.code, created.stderr).toBe(0);
});
afterAll(async () => {
  relay?.closeAllConnections();
  relay?.close();
  await registry?.close();
});

const env = () => ({ NODEREG_REGISTRY: registry.url, NODEREG_TOKEN: registry.adminToken });
/** Where every answer is lost, the retries would go on for the default window (15 s): this is not about its length. */
const shortWindow = { NODEREG_RETRY_WINDOW: '1s' };

/** A committed node project; `files` are added to its tree. */
function project(id: string, files: Record<string, string> = {}) {
  return committedRepo({
    'pyproject.toml': `[project]\nname = "${id}"\nversion = "1.0.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "racer"\n`,
    '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
    ...files,
  });
}

const version = async (id: string) =>
  (await fetch(`${registry.url}/nodes/${id}/versions/1.0.0`)).json() as Promise<{
    status: string;
    archive_sha256?: string;
  }>;

describe('publish when the upload answer is lost or another job uploads the same version', () => {
  it('every upload answer lost, the archive arrived: exit 0 with the version, not "registered without its archive"', {
    timeout: 60_000,
  }, async () => {
    const id = `lost-${randomBytes(3).toString('hex')}`;
    mode = 'drop-put-answers';
    const dir = project(id);
    const result = await runInProcess(['publish', dir, '--json'], { env: { ...env(), ...shortWindow } }).finally(
      () => (mode = 'pass'),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toContain('without its archive');
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({ node_id: id, version: '1.0.0', status: 'NodeVersionStatusActive', skipped: false });
    expect(await version(id)).toMatchObject({
      status: 'NodeVersionStatusActive',
      archive_sha256: report.archive_sha256,
    });
    // the job run again as it was, without --skip-existing: exit 3, saying it is the same archive
    const again = await runInProcess(['publish', dir], { env: env() });
    expect(again.code, again.stderr).toBe(3);
    expect(again.stderr).toContain(
      `error: ${id} 1.0.0 is already published on ${registry.url} with this same archive (sha256 ${report.archive_sha256})\nhint: bump the version in pyproject.toml, or pass --skip-existing`,
    );
  });

  it('every answer to the publish request lost: exit 1 saying the version may be registered, and the command that finishes it does', {
    timeout: 60_000,
  }, async () => {
    const id = `unanswered-${randomBytes(3).toString('hex')}`;
    const dir = project(id);
    mode = 'drop-post-answers';
    const relayed = { NODEREG_REGISTRY: `http://127.0.0.1:${(relay.address() as AddressInfo).port}` };
    const failed = await runInProcess(['publish', dir, '--json'], {
      env: { ...env(), ...relayed, ...shortWindow },
    }).finally(() => (mode = 'pass'));
    expect(failed.code, failed.stderr).toBe(1);
    expect(JSON.parse(failed.stdout).error.message).toContain(
      `with the publish request sent: ${id} 1.0.0 may be registered on ${relayed.NODEREG_REGISTRY} without its archive`,
    );
    const command = /hint: finish it with `nodereg ([^`]+)`/.exec(failed.stderr)?.[1];
    expect(command).toBe(`publish ${dir} --skip-existing`);
    expect(await version(id)).toMatchObject({ status: 'NodeVersionStatusPending' });
    const listed = await runInProcess(['node', 'versions', id], { env: env() });
    expect(listed.stdout).toMatch(/^1\.0\.0 +pending +- +.+ no archive uploaded yet$/m);
    const finished = await runInProcess([...command!.split(' '), '--json'], { env: { ...env(), ...relayed } });
    expect(finished.code, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({
      node_id: id,
      status: 'NodeVersionStatusActive',
      skipped: false,
    });
  });

  it('two jobs, one version, other files: one exits 0, the other 3 "already published", never told to withdraw the winner', {
    timeout: 60_000,
  }, async () => {
    const id = `race-${randomBytes(3).toString('hex')}`;
    // Code the registry's scan must parse (no finding): the first upload holds the version while it is checked.
    const checked = { 'slow.py': Array.from({ length: 20_000 }, (_, i) => `v${i} = eval("1 + ${i}")\n`).join('') };
    mode = 'pair-puts';
    const [a, b] = await Promise.all([
      runInProcess(['publish', project(id, { ...checked, 'a.py': 'A = 1\n' }), '--json'], { env: env() }),
      runInProcess(['publish', project(id, { ...checked, 'b.py': 'B = 1\n' }), '--json'], { env: env() }),
    ]).finally(() => (mode = 'pass'));
    const [won, lost] = a.code === 0 ? [a, b] : [b, a];
    expect(won.code, won.stderr).toBe(0);
    expect(lost.code, lost.stderr).toBe(3);
    expect(lost.stderr).toContain(`error: ${id} 1.0.0 is already published on ${registry.url}`);
    expect(lost.stderr).not.toContain('without its archive');
    expect(lost.stderr).not.toContain('version withdraw');
    expect(JSON.parse(lost.stdout).error).toMatchObject({ code: 'conflict', status: 409 });
    expect(await version(id)).toMatchObject({
      status: 'NodeVersionStatusActive',
      archive_sha256: JSON.parse(won.stdout).archive_sha256,
    });
  });

  it('two jobs, two new nodes of one new publisher, both with --create-publisher: both publish (the later creation finds it made)', {
    timeout: 60_000,
  }, async () => {
    const publisher = `team-${randomBytes(3).toString('hex')}`;
    const relayed = { ...env(), NODEREG_REGISTRY: `http://127.0.0.1:${(relay.address() as AddressInfo).port}` };
    const node = (id: string) =>
      committedRepo({
        'pyproject.toml': `[project]\nname = "${id}"\nversion = "1.0.0"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "${publisher}"\n`,
        '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
      });
    mode = 'pair-creates';
    const results = await Promise.all(
      [`${publisher}-a`, `${publisher}-b`].map((id) =>
        runInProcess(['publish', node(id), '--create-publisher', '--json'], { env: relayed }),
      ),
    ).finally(() => (mode = 'pass'));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(results.map((r) => JSON.parse(r.stdout))).toMatchObject([
      { node_id: `${publisher}-a`, skipped: false },
      { node_id: `${publisher}-b`, skipped: false },
    ]);
  });

  it('a proxy answers 504 to the publish request once (the registry had it): the request is sent again, exit 0', {
    timeout: 60_000,
  }, async () => {
    const id = `gateway-${randomBytes(3).toString('hex')}`;
    mode = 'gateway-timeout-once';
    const result = await runInProcess(['publish', project(id), '--json'], {
      env: { ...env(), NODEREG_REGISTRY: `http://127.0.0.1:${(relay.address() as AddressInfo).port}` },
    }).finally(() => (mode = 'pass'));
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      node_id: id,
      version: '1.0.0',
      status: 'NodeVersionStatusActive',
      skipped: false,
    });
  });
});
