// Measures how long GET /healthz takes while a test sends hostile requests, from its own process (so
// that the test's own work never delays a probe). Started with IPC: `node healthz-prober.js URL`; probes
// one at a time on a kept-alive connection, 10 ms apart, until it receives 'stop'; then answers with
// every probe (when it started, in ms since the epoch, and how long it took) and exits.
import { Agent, get } from 'node:http';

const [url] = process.argv.slice(2);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const probes = [];
let stopping = false;

function probe() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    get(`${url}/healthz`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    }).on('error', reject);
  });
}

process.on('message', (message) => {
  if (message === 'stop') stopping = true;
});
process.send('ready');
while (!stopping) {
  const at = Date.now();
  probes.push({ at, ms: await probe() });
  await new Promise((resolve) => setTimeout(resolve, 10));
}
process.send({ probes });
agent.destroy();
process.disconnect();
