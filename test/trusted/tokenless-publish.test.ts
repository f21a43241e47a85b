// A CI job publishes with no stored token: the CLI asks the stand-in runner for an OIDC token for the
// registry, exchanges it, publishes; the registry records signed provenance, and `nodereg verify` checks
// it, and fails on a changed archive, a changed statement and a statement signed by another key.
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyIdOf, preAuthEncoding } from '../../src/shared/dsse.js';
import { runInProcess } from '../cli/in-process.js';
import { tempDir } from '../helpers.js';
import { committedRepo } from '../package/fixtures.js';
import { call } from '../server/fixtures.js';
import { addTrust, rows, type Trusted, trustedRegistry } from './trusted-fixtures.js';

let t: Trusted;
beforeAll(async () => {
  t = await trustedRegistry();
  expect((await addTrust(t, { repository: 'octo-org/my-node', workflow: 'publish.yml' })).status).toBe(201);
});
afterAll(() => t.close());

const project = (id: string, version = '1.0.0') =>
  committedRepo({
    'pyproject.toml': `[project]\nname = "${id}"\nversion = "${version}"\ndescription = "A node"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "octo"\n`,
    LICENSE: 'MIT',
    '__init__.py': 'NODE_CLASS_MAPPINGS = {}\n',
  });

/** A GitHub Actions job's environment: the runner's token endpoint, no NODEREG_TOKEN. */
const runnerEnv = () => ({
  NODEREG_REGISTRY: t.server.url,
  ACTIONS_ID_TOKEN_REQUEST_URL: `${t.issuer.url}/token?api-version=2.0`,
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: t.issuer.runtimeToken,
});
const cli = (argv: string[]) => runInProcess(argv, { env: runnerEnv() });

describe('a tokenless publish from CI', () => {
  beforeAll(async () => {
    const published = await cli(['publish', project('my-node'), '--json']);
    expect(published.code, published.stderr).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ node_id: 'my-node', status: 'NodeVersionStatusActive' });
  });

  it('records provenance the version answer marks, and verify checks it', async () => {
    const version = await call(t.server.url, 'GET', '/nodes/my-node/versions/1.0.0');
    expect(version.body.has_provenance).toBe(true);
    const verified = await cli(['verify', 'my-node@1.0.0', '--expect-repo', 'octo-org/my-node', '--json']);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({
      verified: true,
      repository: 'octo-org/my-node',
      commit: 'a'.repeat(40),
      ref: 'refs/tags/v1.0.0',
      sha256: version.body.archive_sha256,
    });
    const shown = await cli(['node', 'show', 'my-node']);
    expect(shown.stdout).toContain('1.0.0 (provenance)');
    const page = await fetch(`${t.server.url}/nodes/my-node`, { headers: { accept: 'text/html' } });
    expect(await page.text()).toMatch(/>1\.0\.0<\/a>\s*<span[^>]*>\s*\(provenance\)/);
    const text = await cli(['verify', 'my-node']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('repository octo-org/my-node');
    expect(text.stdout).toContain(`commit ${'a'.repeat(40)}`);
  });

  it('verify fails for another repository than expected', async () => {
    const result = await cli(['verify', 'my-node@1.0.0', '--expect-repo', 'someone/else']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('built from octo-org/my-node, not someone/else');
  });

  it('verify checks a local archive, and fails on a modified one', async () => {
    const version = await call(t.server.url, 'GET', '/nodes/my-node/versions/1.0.0');
    const bytes = Buffer.from(await (await fetch(version.body.downloadUrl)).arrayBuffer());
    const file = join(tempDir(), 'node.zip');
    writeFileSync(file, bytes);
    const ok = await cli(['verify', file, '--node', 'my-node@1.0.0']);
    expect(ok.code, ok.stderr).toBe(0);
    bytes[bytes.length - 1] ^= 1;
    writeFileSync(file, bytes);
    const modified = await cli(['verify', file, '--node', 'my-node@1.0.0']);
    expect(modified.code).toBe(1);
    expect(modified.stderr).toContain("the archive's sha256 is");
  });

  const envelope = () =>
    JSON.parse(
      (t.server.server.db!.prepare("SELECT provenance FROM versions WHERE node_id = 'my-node'").get() as any)
        .provenance,
    );
  const storeEnvelope = (value: unknown) =>
    t.server.server
      .db!.prepare("UPDATE versions SET provenance = ? WHERE node_id = 'my-node'")
      .run(JSON.stringify(value));

  it('verify fails on a modified statement, and on one signed by another key', async () => {
    const original = envelope();
    try {
      const statement = JSON.parse(Buffer.from(original.payload, 'base64').toString('utf8'));
      statement.predicate.buildDefinition.externalParameters.workflow.repository = 'evil/fork';
      const payload = Buffer.from(JSON.stringify(statement));
      storeEnvelope({ ...original, payload: payload.toString('base64') });
      const modified = await cli(['verify', 'my-node@1.0.0']);
      expect(modified.code).toBe(1);
      expect(modified.stderr).toContain('signature does not match');

      const other = generateKeyPairSync('ed25519');
      const sig = sign(null, preAuthEncoding(original.payloadType, payload), other.privateKey).toString('base64');
      storeEnvelope({
        ...original,
        payload: payload.toString('base64'),
        signatures: [{ keyid: keyIdOf(other.publicKey), sig }],
      });
      const foreign = await cli(['verify', 'my-node@1.0.0']);
      expect(foreign.code).toBe(1);
      expect(foreign.stderr).toContain("not one of the registry's keys");

      // another key that claims the registry's key id
      storeEnvelope({
        ...original,
        payload: payload.toString('base64'),
        signatures: [{ keyid: original.signatures[0].keyid, sig }],
      });
      const claimed = await cli(['verify', 'my-node@1.0.0']);
      expect(claimed.code).toBe(1);
      expect(claimed.stderr).toContain('signature does not match');
    } finally {
      storeEnvelope(original);
    }
  });
});

describe('a trusted publish the registry refuses', () => {
  it('names the claim and the trust to register, and creates nothing', async () => {
    const nodes = rows(t, 'nodes');
    t.issuer.job = { ...t.issuer.job, repository: 'evil/fork' };
    try {
      const result = await cli(['publish', project('forked-node'), '--trusted']);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("the token's repository claim");
      expect(result.stderr).toContain(
        '`nodereg publisher trust add octo --repository evil/fork --workflow publish.yml',
      );
    } finally {
      t.issuer.job = { ...t.issuer.job, repository: 'octo-org/my-node' };
    }
    expect(rows(t, 'nodes')).toBe(nodes);
  });

  it('from an issuer the registry does not trust: says how its operator adds one', async () => {
    const other = await trustedRegistry({ oidcIssuers: { github: 'https://token.actions.invalid' } });
    try {
      const result = await runInProcess(['publish', project('untrusted-node'), '--trusted'], {
        env: {
          NODEREG_REGISTRY: other.server.url,
          ACTIONS_ID_TOKEN_REQUEST_URL: `${other.issuer.url}/token?api-version=2.0`,
          ACTIONS_ID_TOKEN_REQUEST_TOKEN: other.issuer.runtimeToken,
        },
      });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('is not an issuer this registry trusts');
      expect(result.stderr).toContain('nodereg serve --oidc-issuer <name>=<url>');
    } finally {
      await other.close();
    }
  });

  it('--trusted outside CI says what the job needs', async () => {
    const result = await runInProcess(['publish', project('local-node'), '--trusted'], {
      env: { NODEREG_REGISTRY: t.server.url },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('id-token: write');
  });
});
