// A registry in its own process, so a test can measure the server's memory and not its own, or kill it.
// Runs the built server (dist/, from `npm run build`, which `npm test` runs first), without a TypeScript
// loader to start. Started with `node child-server.js DATA_DIR ADMIN_TOKEN [OPTIONS_JSON]`; prints its URL on
// stdout; answers IPC 'memory' with its RSS (now, lifetime peak, and peak since the last ask) and what
// JavaScript holds after a collection (V8's heap and Buffers), and
// 'upload-memory' with the bytes its uploads hold of their budget. OPTIONS_JSON adds server options (maxArchive, timeouts…);
// with `"log": true` the access log goes to stderr.
// IPC {crashAt} (for crash tests) arms a SIGKILL of the process at one step of the next upload:
// `archive-stored` once the archive file is in place, before the database records it;
// `archive-recorded` once the database recorded it, before the answer is sent.
import { createRegistryServer } from '../../dist/server/index.js';

const [dataDir, adminToken, extra] = process.argv.slice(2);
// `"log": true` writes the access log (and any internal error) on stderr.
const { log, ...options } = extra ? JSON.parse(extra) : {};
const server = createRegistryServer({
  dataDir,
  adminToken,
  port: 0,
  host: '127.0.0.1',
  ...options,
  log: log ? (line) => process.stderr.write(`${line}\n`) : undefined,
});

/** @type {string | undefined} */
let crashAt;
const die = () => process.kill(process.pid, 'SIGKILL');
const commit = server.archives.commit.bind(server.archives);
server.archives.commit = async (...args) => {
  await commit(...args);
  if (crashAt === 'archive-stored') die();
};
const record = server.store.recordArchive.bind(server.store);
server.store.recordArchive = async (...args) => {
  const recorded = await record(...args);
  if (crashAt === 'archive-recorded') die();
  return recorded;
};

const url = await server.listen();
// The highest RSS seen since the last 'memory' message, sampled: unlike maxRSS (the process's whole
// life), it lets a test measure a second time in the same process.
let peak = 0;
setInterval(() => {
  try {
    peak = Math.max(peak, process.memoryUsage.rss());
  } catch {
    // reading the RSS opens a file: no descriptor is left in the EMFILE test
  }
}, 5).unref();
process.on('message', (message) => {
  if (message === 'memory') {
    globalThis.gc?.();
    const { rss, heapUsed, external } = process.memoryUsage();
    process.send?.({
      rss,
      maxRss: process.resourceUsage().maxRSS * 1024,
      peak: Math.max(peak, rss),
      held: heapUsed + external,
    });
    peak = rss;
  }
  if (message === 'upload-memory') process.send?.({ held: server.uploadMemory.held });
  if (message === 'close') void server.close().then(() => process.exit(0));
  if (typeof message === 'object' && message !== null && 'crashAt' in message) {
    crashAt = String(message.crashAt);
    process.send?.({ armed: crashAt });
  }
});
process.stdout.write(`${url}\n`);
