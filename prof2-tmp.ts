import { randomBytes } from 'node:crypto';
import { Scanner } from './src/scan/scanner.ts';
const s: any = await Scanner.load();
const bytes = randomBytes(4 * 1024 * 1024 - 16);
for (let i = 0; i < bytes.length; i++) bytes[i] = 32 + (bytes[i] % 95);
for (let i = 0; i < bytes.length; i += 80) bytes[i] = 10;
const text = bytes.toString('latin1');
let t = performance.now(); const tree = s.languages.python.parser.parse(text); console.log('random printable ascii parse', (performance.now() - t).toFixed(0), 'ms rss', (process.memoryUsage().rss / 1e6).toFixed(0));
