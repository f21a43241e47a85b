// `serve --seed`: on an empty data dir, fill the new registry through its real HTTP API (the same
// calls a publisher makes), so a newcomer sees a publisher and a published node at once.
import { createHash } from 'node:crypto';
import { buffer } from 'node:stream/consumers';
import yazl from 'yazl';
import { createClient } from '../client/index.js';
import type { Ctx } from './context.js';
import { routes } from '../client/routes.js';

export const SEED = { publisher: 'example', node: 'example-node', version: '1.0.0' } as const;

const FILES: [string, string][] = [
  [
    'pyproject.toml',
    `[project]\nname = "${SEED.node}"\nversion = "${SEED.version}"\ndescription = "An example node, seeded by nodereg serve --seed"\n` +
      `license = "MIT"\n\n[tool.nodereg]\npublisher = "${SEED.publisher}"\ndisplay-name = "Example Node"\n`,
  ],
  ['example_node/__init__.py', 'NODE_CLASS_MAPPINGS = {}\nNODE_DISPLAY_NAME_MAPPINGS = {}\n'],
];

/** A small deterministic zip, built in memory. */
async function exampleArchive(): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  const mtime = new Date(1980, 0, 1);
  for (const [name, text] of FILES)
    zip.addBuffer(Buffer.from(text), name, { mtime, mode: 0o100644, forceDosTimestamp: true });
  zip.end();
  return buffer(zip.outputStream);
}

export async function seed(url: string, adminToken: string, ctx: Ctx): Promise<void> {
  const client = createClient({ baseUrl: url, token: adminToken, userAgent: `nodereg/${ctx.version} (seed)` });
  await client.call(routes.createPublisher, {
    body: { id: SEED.publisher, name: 'Example Publisher', description: 'Seeded by nodereg serve --seed' },
  });
  const published = await client.call(routes.publishVersion, {
    params: { publisherId: SEED.publisher, nodeId: SEED.node },
    body: {
      node: {
        id: SEED.node,
        name: 'Example Node',
        description: 'An example node, seeded by nodereg serve --seed',
        author: 'nodereg',
        license: 'MIT',
        tags: ['example'],
      },
      node_version: { version: SEED.version, changelog: 'First release', dependencies: [] },
    },
  });
  const archive = await exampleArchive();
  const version = await client.upload(published.signedUrl, {
    open: () => new Blob([archive]).stream(),
    size: archive.length,
    sha256: createHash('sha256').update(archive).digest('hex'),
  });

  const info = (line: string) => ctx.out.info(line);
  info(
    `seeded publisher "${SEED.publisher}" with node ${SEED.node} ${SEED.version}${version.downloadUrl ? ` (${version.downloadUrl})` : ''}`,
  );
  info('');
  info('Publish your own node:');
  info('  nodereg publisher create my-publisher --name "My Publisher"');
  info('  nodereg init path/to/my-node --publisher my-publisher');
  info('  nodereg publish path/to/my-node');
  info(`Browse: nodereg node show ${SEED.node} · ${url}/nodes`);
}
