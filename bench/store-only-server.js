// The floor of a registry, for `npm run bench publish`: a node:http server that does only what an
// upload must, with no checks, no database and no scan. It answers a POST with 201 and a signed-URL
// stand-in, and a PUT by streaming the body to a file in DIR, fsync and rename, as the registry stores
// an archive durably, then 200 with an Active version. Prints its URL once it listens.
// Usage: node store-only-server.js DIR
import { createWriteStream, fsyncSync, openSync, closeSync, renameSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const dir = process.argv[2];
let uploads = 0;
const answer = (response, status, value) => {
  const body = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
};
const server = createServer((request, response) => {
  if (request.method === 'POST') {
    request.resume();
    request.on('end', () =>
      answer(response, 201, {
        node_version: {},
        signedUrl: `http://127.0.0.1:${server.address().port}/uploads/${++uploads}`,
      }),
    );
    return;
  }
  const part = join(dir, `${uploads}.part`);
  const file = createWriteStream(part);
  request.pipe(file);
  file.on('finish', () => {
    const fd = openSync(part, 'r+');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(part, join(dir, `${uploads}.zip`));
    answer(response, 200, { status: 'NodeVersionStatusActive' });
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
