// A reference for the serve benchmark: the framework alone. A bare Hono app on @hono/node-server
// (what `nodereg serve` is built on) answering, to any request, the JSON in the file given.
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const node = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const app = new Hono();
app.all('*', (c) => c.json(node));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  process.stdout.write(`listening on http://127.0.0.1:${info.port}\n`),
);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
