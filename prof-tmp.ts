import { randomBytes } from 'node:crypto';
import { asRead, admittedRules, Scanner } from './src/scan/scanner.ts';
const text = randomBytes(4 * 1024 * 1024 - 16).toString('utf8');
const s: any = await Scanner.load();
let t = performance.now(); const r = asRead('python', text); console.log('asRead', (performance.now() - t).toFixed(0), 'ms', r === text);
t = performance.now(); const a = admittedRules('b.py', text); console.log('admitted', (performance.now() - t).toFixed(0), 'ms', a.map((x: any) => x.rule.id));
t = performance.now(); const tree = s.languages.python.parser.parse(r); console.log('parse', (performance.now() - t).toFixed(0), 'ms rss', (process.memoryUsage().rss / 1e6).toFixed(0), 'root', tree.rootNode.type, tree.rootNode.childCount);
tree.delete();
t = performance.now(); const f = s.scanFile('b.py', text, {}, a); console.log('scanFile', (performance.now() - t).toFixed(0), 'ms', f.findings.length, 'rss', (process.memoryUsage().rss / 1e6).toFixed(0));
