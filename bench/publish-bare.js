// A bare client, for `npm run bench publish`: the bytes of a publish and nothing else. It lists and
// reads the files, deflates them (level 4, as the packer does; a .png is stored) into a zip held in
// memory (the tests' zip writer), hashes it, POSTs the version and PUTs the archive, with Node's
// built-ins only. No manifest, no file-set rules or git, no local scan, no GET /limits, no temporary
// file: what `nodereg publish` costs over it is what those steps and the CLI's own code cost. It
// imports TypeScript, so bench/publish.js bundles it with esbuild first.
// Usage: node publish-bare.js DIR PUBLISHER NODE VERSION (NODEREG_REGISTRY and NODEREG_TOKEN from the environment).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, relative, sep } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { rawZip } from '../test/server/zip-builder.ts';

const [dir, publisher, nodeId, version] = process.argv.slice(2);
const registry = process.env.NODEREG_REGISTRY;
const token = process.env.NODEREG_TOKEN;

const paths = readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'))
  .sort();
const archive = rawZip(
  paths.map((path) => {
    const data = readFileSync(join(dir, path));
    return path.endsWith('.png')
      ? { name: path, data, method: 0 }
      : { name: path, data, compressed: deflateRawSync(data, { level: 4 }) };
  }),
);
const sha256 = createHash('sha256').update(archive).digest('hex');

function send(method, url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const posted = await send(
  'POST',
  `${registry}/publishers/${publisher}/nodes/${nodeId}/versions`,
  { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  Buffer.from(
    JSON.stringify({
      node: { id: nodeId },
      node_version: { version, archive_size: archive.length, archive_sha256: sha256 },
    }),
  ),
);
if (posted.status !== 201) throw new Error(`POST: ${posted.status} ${posted.text}`);
const put = await send(
  'PUT',
  JSON.parse(posted.text).signedUrl,
  { 'content-type': 'application/zip', 'x-content-sha256': sha256 },
  archive,
);
if (put.status !== 200) throw new Error(`PUT: ${put.status} ${put.text}`);
if (JSON.parse(put.text).status !== 'NodeVersionStatusActive')
  throw new Error(`PUT: the version is ${JSON.parse(put.text).status}`);
