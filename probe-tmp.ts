import { randomBytes } from 'node:crypto';
import yazl from 'yazl';
const tree = process.argv[2];
const { startServer } = await import(`${tree}/test/helpers.ts`);
const { createUser, createPublisher, publish, uploadTo, makeZip } = await import(`${tree}/test/server/fixtures.ts`);
const server = await startServer({ log: () => {} });
const owner = await createUser(server);
await createPublisher(server, owner, 'acme');
let worstHealth = 0;
let probing = true;
let prober: Promise<void> | undefined;
const startProber = () => prober = (async () => { while (probing) { const t = performance.now(); await fetch(`${server.url}/healthz`); worstHealth = Math.max(worstHealth, performance.now() - t); await new Promise((r) => setTimeout(r, 20)); } })();
function dupZip(): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (let i = 0; i < 3; i++) zip.addBuffer(Buffer.from(i === 2 ? 'import os\nos.system(cmd)\n' : 'x = 1\n'), 'a.py');
  zip.end();
  return new Promise((resolve) => { const c: Buffer[] = []; zip.outputStream.on('data', (d: Buffer) => c.push(d)); zip.outputStream.on('end', () => resolve(Buffer.concat(c))); });
}
const rnd = randomBytes(4 * 1024 * 1024 - 16);
const cases: [string, () => Promise<Buffer>][] = [
  ['oversized .py with os.system', () => makeZip({ 'big.py': 'import os\nos.system(cmd)\n' + '#'.repeat(5 * 1024 * 1024) + '\n', 'big.js': 'eval(code);\n' + '//'.repeat(3 * 1024 * 1024) + '\n' })],
  ['minified 4 MiB one line', () => makeZip({ 'min.py': 'x=1;'.repeat(1024 * 1024 - 8) + 'import os;os.system(c)\n' })],
  ['binary as .py (random 4 MiB)', () => makeZip({ 'bin.py': rnd })],
  ['NUL + invalid UTF-8 + surrogate bytes', () => makeZip({ 'n.py': Buffer.concat([Buffer.from('x = 1\x00\n'), Buffer.from([0xed, 0xa0, 0x80, 0xff, 0xfe, 0x0a]), Buffer.from('import os\nos.system(cmd)\n')]) })],
  ['BOM + CRLF', () => makeZip({ 'b.py': '\ufeffimport os\r\nos.system(cmd)\r\n' })],
  ['unusual unicode names', () => makeZip({ 'nodes/\u202eyp.txt.py': 'import os\nos.system(cmd)\n', 'nodes/ｆｕｌｌ.py': 'eval(x)\n', 'nodes/e\u0301.py': 'x=1\n' })],
  ['duplicate names', dupZip],
  ['nested lists 200 deep x 5000', () => makeZip({ 'deep.py': ('x = ' + '['.repeat(200) + ']'.repeat(200) + '\n').repeat(5000) + 'eval(y)\n' })],
  ['100,000 nested eval(', () => makeZip({ 'nest.py': 'eval('.repeat(100000) + 'x' + ')'.repeat(100000) + '\n' })],
  ['5,000 files of 270 findings', () => makeZip(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`m/${i}.py`, 'eval(x)\n'.repeat(270)])))],
];
const only = process.argv[3] ? new RegExp(process.argv[3]) : undefined;
const built: [string, Buffer][] = [];
for (const [name, zip] of cases) if (!only || only.test(name)) built.push([name, await zip()]);
startProber();
let n = 0;
for (const [name, body] of built) {
  const id = `probe${n++}`;
  const published = await publish(server, owner.token, 'acme', id, '1.0.0');
  await new Promise((r) => setTimeout(r, 200));
  worstHealth = 0;
  const t = performance.now();
  const cpu0 = process.cpuUsage();
  const up = await uploadTo(published.body.signedUrl, body);
  const cpu = process.cpuUsage(cpu0);
  console.log(`${name}: ${up.status} ${up.body?.status ?? ''} ${(up.body?.status_reason ?? up.body?.message ?? '').slice(0, 110)} | ${(performance.now() - t).toFixed(0)} ms, cpu ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s, rss ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB, findings ${up.body?.findings?.length}, worst /healthz ${worstHealth.toFixed(0)} ms`);
}
probing = false;
await prober;
console.log('worst /healthz', worstHealth.toFixed(0), 'ms');
await server.close();
