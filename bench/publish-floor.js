// The least a publish of a node must do, for `npm run bench publish` to measure as its floor: start
// Node with the built-ins a publish needs, list and read the files, test the Python against the scan
// rules' text gate (a file that admits no rule is never parsed), pack them with the project's packer
// (in this thread for a small node), then POST the version and PUT the archive over node:http. No
// manifest, no file-set rules, no zod, no commander, no GET /limits. It imports the TypeScript
// sources, so bench/publish.js bundles it with esbuild first.
// Usage: node floor.js DIR PUBLISHER NODE VERSION (NODEREG_REGISTRY and NODEREG_TOKEN from the environment);
// FLOOR_UNTIL=start|read|scan|pack|post stops after that step, to see what each step adds.
import { createReadStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { writeArchive } from '../src/package/zip.ts';
import { admittedRules } from '../src/scan/scanner.ts';

const [dir, publisher, nodeId, version] = process.argv.slice(2);
const registry = process.env.NODEREG_REGISTRY;
const token = process.env.NODEREG_TOKEN;
let temp;
/** Ends here when FLOOR_UNTIL names this step. */
const stopAfter = (step) => {
  if (process.env.FLOOR_UNTIL !== step) return;
  if (temp) rmSync(temp, { recursive: true, force: true });
  process.exit(0);
};
stopAfter('start');

const files = readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile())
  .map((entry) => {
    const abs = join(entry.parentPath, entry.name);
    return { path: relative(dir, abs).split(sep).join('/'), abs, size: statSync(abs).size, mode: 0o644 };
  });
const texts = files
  .filter((file) => file.path.endsWith('.py'))
  .map((file) => ({ path: file.path, text: readFileSync(file.abs, 'utf8') }));
stopAfter('read');
for (const { path, text } of texts) admittedRules(path, text);
stopAfter('scan');
temp = mkdtempSync(join(tmpdir(), 'nodereg-floor-'));
const archive = await writeArchive(files, join(temp, 'node.zip'));
stopAfter('pack');

function send(method, url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    if (typeof body === 'string') req.end(body);
    else body.pipe(req);
  });
}

const body = JSON.stringify({
  node: { id: nodeId },
  node_version: { version, archive_size: archive.size, archive_sha256: archive.sha256 },
});
const posted = await send(
  'POST',
  `${registry}/publishers/${publisher}/nodes/${nodeId}/versions`,
  {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  },
  body,
);
if (posted.status !== 201) throw new Error(`POST: ${posted.status} ${posted.text}`);
stopAfter('post');
const put = await send(
  'PUT',
  JSON.parse(posted.text).signedUrl,
  { 'content-type': 'application/zip', 'content-length': String(archive.size) },
  createReadStream(archive.path),
);
if (put.status !== 200) throw new Error(`PUT: ${put.status} ${put.text}`);
rmSync(temp, { recursive: true, force: true });
