// Scan: `nodereg scan` of the pack benchmark's generated 2,000-file tree (1,979 Python files, ~28 MB
// of source), next to `nodereg pack` of the same tree, run in turns. Target: under 3 s on the
// benchmark machine (2 cores). A file is parsed only for the rules its text admits (each rule's
// `requires`), and this tree's plain code admits none; so the same tree is scanned again with
// `import sys, torch` added to every file, which makes every file parsed and queried. Runnable
// alone: `npm run bench scan`.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, cliEnv, median, ms, row } from './lib.js';
import { generateTree, run } from './pack.js';

const RUNS = 5;

function pythonFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? pythonFiles(join(dir, entry.name)) : entry.name.endsWith('.py') ? [join(dir, entry.name)] : [],
  );
}

/** Medians of the commands run in turns after a warm-up round (page cache). */
async function inTurns(commands) {
  const samples = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let i = 0; i <= RUNS; i++) {
    for (const [name, command] of Object.entries(commands)) {
      const result = await command();
      if (i > 0) samples[name].push(result.ms);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

export default async function scan() {
  const tree = generateTree();
  const out = join(tree.root, '..');
  const env = cliEnv(join(out, 'home'));
  const scanTree = () => run(process.execPath, [BIN, 'scan', tree.root, '--json'], { env });
  const plain = await inTurns({
    scan: scanTree,
    pack: () => run(process.execPath, [BIN, 'pack', tree.root, '--out', join(out, 'scan-bench.zip')], { env }),
  });
  for (const file of pythonFiles(tree.root)) writeFileSync(file, `import sys, torch\n${readFileSync(file, 'utf8')}`);
  const parsed = await inTurns({ scan: scanTree });
  return {
    rows: [
      row('scan: `nodereg scan` of the 2,000-file tree, time', ms(plain.scan), `nodereg pack of the same tree: ${ms(plain.pack)}`, plain.scan / plain.pack, '< 3 s', plain.scan < 3000),
      row('scan: the same tree, every file parsed (imports sys, torch)', ms(parsed.scan), `nodereg pack of the plain tree: ${ms(plain.pack)}`, parsed.scan / plain.pack, '< 3 s', parsed.scan < 3000),
    ],
    notes: [
      `scan: the pack section's tree (${tree.files.toLocaleString('en')} files, ${(tree.source / 1e6).toFixed(1)} MB of Python source in 1,979 files); medians of ${RUNS} runs in turns after a warm-up round; the scan splits the files across one worker thread per core`,
    ],
  };
}
