// `nodereg serve` and `nodereg backup` as a user runs them: the real binary, spawned with temp
// HOME/XDG dirs, talking to 127.0.0.1 only.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers.js';
import { serve } from './serve-helper.js';

function integrity(dbPath: string): string {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}

describe('nodereg serve', () => {
  it('prints only the URL line on stdout, serves, and closes cleanly on SIGTERM; a restart keeps the data dir', async () => {
    const dataDir = join(tempDir(), 'data');
    const first = await serve(['--port', '0', '--data-dir', dataDir]);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${first.url}/healthz`);
    expect(health.status).toBe(200);
    expect(first.stderr()).toContain(`callback key for webhook receivers: ${join(dataDir, 'callback-key')}`);
    const secret = readFileSync(join(dataDir, 'secret'), 'utf8');

    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(first.stdout()).toBe(`nodereg registry listening on ${first.url}\n`);
    expect(first.stderr()).toMatch(/GET \/healthz 200/);
    // closed cleanly: the WAL was checkpointed and removed
    expect(existsSync(join(dataDir, 'registry.db-wal'))).toBe(false);
    expect(integrity(join(dataDir, 'registry.db'))).toBe('ok');

    const second = await serve(['--port', '0', '--data-dir', dataDir]);
    expect(readFileSync(join(dataDir, 'secret'), 'utf8')).toBe(secret);
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
    expect(await second.stop('SIGINT')).toEqual({ code: 0, signal: null });
    expect(second.stdout()).toBe(`nodereg registry listening on ${second.url}\n`);
  });

  it('writes a JSON access log with --log json, and none with --log off', async () => {
    const json = await serve(['--port', '0', '--data-dir', tempDir(), '--log', 'json']);
    await fetch(`${json.url}/healthz`);
    await fetch(`${json.url}/no-such-route`);
    expect((await json.stop()).code).toBe(0);
    const lines = json
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual(expect.objectContaining({ method: 'GET', path: '/healthz', status: 200 }));
    expect(lines).toContainEqual(expect.objectContaining({ method: 'GET', path: '/no-such-route', status: 404 }));

    const off = await serve(['--port', '0', '--data-dir', tempDir(), '--log', 'off']);
    await fetch(`${off.url}/healthz`);
    expect((await off.stop()).code).toBe(0);
    expect(off.stderr()).not.toContain('/healthz');
  });

  it.each([
    [['--max-archive', '12zz'], '--max-archive'],
    [['--max-unpacked', 'lots'], '--max-unpacked'],
    [['--port', '70000'], '--port'],
    [['--rate-limit', '5/hour'], '--rate-limit'],
    [['--public-url', 'ftp://x'], '--public-url'],
    [['--review', 'sometimes'], '--review'],
    [['--log', 'xml'], '--log'],
  ])('refuses %j before starting: exit 2 naming the flag', async (args, flag) => {
    const dataDir = join(tempDir(), 'data');
    const result = await runCli(['serve', '--port', '0', '--data-dir', dataDir, ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(flag);
    expect(result.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('exits 1 naming the port when it is in use', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const result = await runCli(['serve', '--port', String(port), '--data-dir', tempDir()]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`port ${port}`);
      expect(result.stderr).toContain('already in use');
      expect(result.stdout).toBe('');
    } finally {
      blocker.close();
    }
  });
});

describe('nodereg backup', () => {
  it('takes a consistent snapshot while the server runs', async () => {
    const dataDir = tempDir();
    const served = await serve(['--port', '0', '--data-dir', dataDir]);
    const out = join(tempDir(), 'backup');
    const result = await runCli(['backup', '--data-dir', dataDir, out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('registry.db');
    expect(integrity(join(out, 'registry.db'))).toBe('ok');
    expect(readFileSync(join(out, 'secret'), 'utf8')).toBe(readFileSync(join(dataDir, 'secret'), 'utf8'));
    expect(statSync(join(out, 'secret')).mode & 0o777).toBe(0o600);
    // the server keeps serving
    expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
    expect((await served.stop()).code).toBe(0);

    // the backup is a data dir a server starts on
    const restored = await serve(['--port', '0', '--data-dir', out]);
    expect((await fetch(`${restored.url}/healthz`)).status).toBe(200);
    expect((await restored.stop()).code).toBe(0);
  });

  it('refuses an OUT that is not empty, and a dir without a registry', async () => {
    const dataDir = tempDir();
    const served = await serve(['--port', '0', '--data-dir', dataDir]);
    await served.stop();
    const taken = tempDir();
    const kept = join(taken, 'keep.txt');
    await import('node:fs').then((fs) => fs.writeFileSync(kept, 'mine'));
    const refused = await runCli(['backup', '--data-dir', dataDir, taken]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('not an empty dir');
    expect(readdirSync(taken)).toEqual(['keep.txt']);

    const empty = tempDir();
    const noRegistry = await runCli(['backup', '--data-dir', empty, join(tempDir(), 'out')]);
    expect(noRegistry.code).toBe(2);
    expect(noRegistry.stderr).toContain('no registry database');

    // an existing empty dir is fine
    const emptyOut = tempDir();
    expect((await runCli(['--json', 'backup', '--data-dir', dataDir, emptyOut])).code).toBe(0);
    expect(integrity(join(emptyOut, 'registry.db'))).toBe('ok');
  });
});
