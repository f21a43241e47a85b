// An air-gapped copy: `mirror sync --from-workflow` on a connected mirror, then `backup` → `restore`
// into a fresh data dir, served without --upstream: every synced install works, with the same bytes.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../cli/in-process.js';
import { startServer, tempDir, type TestServer } from '../helpers.js';
import { call, createPat, createPublisher, createUser, makeZip, publishAndUpload } from '../server/fixtures.js';

const classPack = (name: string) => ({
  '__init__.py': `class ${name}:\n    RETURN_TYPES = ("IMAGE",)\n    FUNCTION = "run"\n    CATEGORY = "fx"\n\nNODE_CLASS_MAPPINGS = {"${name}": ${name}}\n`,
});

describe('a mirror synced from a workflow, backed up and restored offline', () => {
  let upstream: TestServer;
  let mirror: TestServer;
  const zips: Record<string, Buffer> = {};
  let workflow: string;

  beforeAll(async () => {
    upstream = await startServer();
    const owner = await createUser(upstream);
    await createPublisher(upstream, owner, 'lumen');
    const pat = await createPat(upstream, owner, 'lumen');
    for (const [id, name] of [
      ['glow-pack', 'GlowFx'],
      ['blur-pack', 'BlurFx'],
      ['unused-pack', 'UnusedFx'],
    ] as const) {
      zips[id] = await makeZip(classPack(name));
      await publishAndUpload(upstream, pat, 'lumen', id, '1.0.0', {}, zips[id]);
    }
    mirror = await startServer({ upstream: { url: upstream.url } });
    workflow = join(tempDir(), 'flow.json');
    writeFileSync(
      workflow,
      JSON.stringify({
        '1': { class_type: 'GlowFx', inputs: {} },
        '2': { class_type: 'BlurFx', inputs: {} },
        '3': { class_type: 'KSampler', inputs: {} },
        '4': { class_type: 'NobodyDefinesThis', inputs: {} },
      }),
    );
  });
  afterAll(async () => {
    await mirror?.close();
    await upstream?.close();
  });

  const cli = (args: string[]) => runInProcess(['--registry', mirror.url, '--token', mirror.adminToken, ...args]);

  it('syncs the packs the workflow needs, lists the class no pack defines, and fails on it only with --strict', async () => {
    const synced = await cli(['mirror', 'sync', '--from-workflow', workflow, '--json']);
    expect(synced.code, synced.stderr).toBe(0);
    const report = JSON.parse(synced.stdout);
    expect(report.nodes.map((n: { id: string }) => n.id).sort()).toEqual(['blur-pack', 'glow-pack']);
    expect(report.nodes.flatMap((n: { versions: { outcome: string }[] }) => n.versions.map((v) => v.outcome))).toEqual([
      'fetched',
      'fetched',
    ]);
    expect(report.unknown).toEqual(['NobodyDefinesThis']);
    expect(report.core).toEqual(['KSampler']);
    // run again: what is kept is kept (a sync resumes), and --strict fails on the unknown class
    const strict = await cli(['mirror', 'sync', '--from-workflow', workflow, '--strict', '--json']);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('NobodyDefinesThis');
    expect(
      JSON.parse(strict.stdout.slice(0, strict.stdout.indexOf('\n}\n') + 2)).nodes.flatMap(
        (n: { versions: { outcome: string }[] }) => n.versions.map((v) => v.outcome),
      ),
    ).toEqual(['kept', 'kept']);
    const status = await cli(['mirror', 'status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const state = JSON.parse(status.stdout);
    expect(state.archives).toBe(2);
    expect(state.nodes.every((n: { pinned: number }) => n.pinned === 1)).toBe(true);
  });

  it('serves every synced install from a restored copy with no upstream', async () => {
    await mirror.close();
    const backup = join(tempDir(), 'snapshot');
    const backedUp = await runInProcess(['backup', '--data-dir', mirror.dataDir, backup]);
    expect(backedUp.code, backedUp.stderr).toBe(0);
    const fresh = tempDir();
    const restored = await runInProcess(['restore', backup, '--database', join(fresh, 'registry.db')]);
    expect(restored.code, restored.stderr).toBe(0);
    await upstream.close();
    const offline = await startServer({ dataDir: fresh });
    try {
      for (const id of ['glow-pack', 'blur-pack']) {
        const install = await call(offline.url, 'GET', `/nodes/${id}/install`);
        expect(install.status, install.text).toBe(200);
        expect(install.body.downloadUrl.startsWith(offline.url)).toBe(true);
        const archive = await fetch(install.body.downloadUrl);
        expect(archive.status).toBe(200);
        expect(Buffer.from(await archive.arrayBuffer()).equals(zips[id]!)).toBe(true);
      }
      expect((await call(offline.url, 'GET', '/nodes/unused-pack')).status).toBe(404);
      // the restored copy lists what it keeps, marked as upstream's
      const listed = await call(offline.url, 'GET', '/nodes');
      expect(listed.body.nodes.map((node: { id: string; origin?: string }) => `${node.id} ${node.origin}`)).toEqual([
        'blur-pack upstream',
        'glow-pack upstream',
      ]);
    } finally {
      await offline.close();
    }
    expect(readFileSync(join(fresh, 'registry.db')).length).toBeGreaterThan(0);
  });
});
