// A registry in its own process, so a test can measure the server's memory and not its own.
// Started with `node --import tsx`; prints its URL on stdout; answers IPC 'memory' with its RSS.
import { createRegistryServer } from '../../src/server/index.js';

const [dataDir, adminToken] = process.argv.slice(2);
const server = createRegistryServer({ dataDir, adminToken, port: 0, host: '127.0.0.1' });
const url = await server.listen();
process.on('message', (message) => {
  if (message === 'memory') {
    global.gc?.();
    process.send!({ rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 });
  }
  if (message === 'close') void server.close().then(() => process.exit(0));
});
process.stdout.write(`${url}\n`);
