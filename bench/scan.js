// Scan: `nodereg scan` of the pack benchmark's generated 2,000-file tree (1,979 Python files, ~28 MB
// of source), next to `nodereg pack` of the same tree, run in turns. Target: under 3 s on the
// benchmark machine (2 cores). A file is parsed only for the rules its text admits (each rule's
// `requires`), and this tree's plain code admits none; so the same tree is scanned again with
// `import sys, torch` added to every file, which makes every file parsed (in the statements that name
// them, as nothing else there is read: src/scan/statements.ts) and queried; then with `import subprocess`
// too, which the resolution layer follows, so that every file is parsed whole. CPU time (user +
// system) of the same commands is shown beside, as it moves far less than wall time on a shared machine.
// Every scan row but the warm one runs with --no-cache (cold); the warm one reads the cache a first
// run filled. Then the scanner's fixed cost: `nodereg scan` of a node of the publish benchmark's 1 MB shape (40
// Python files of ~12 KB), plain and with the same imports, against `node -e 0`. Runnable alone:
// `npm run bench scan`. Issue 32 holds the parsed scan to at most 2× the pack of the same (valid) tree.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, cliEnv, cpuOfCommands, median, ms, random, row, timeCommands } from './lib.js';
import { generateTree, pythonSource, run } from './pack.js';

const RUNS = 5;
const CPU_RUNS = 3;
const IMPORTS = 'import sys, torch\n';
const RESOLVED = 'import subprocess\n';

function pythonFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? pythonFiles(join(dir, entry.name))
      : entry.name.endsWith('.py')
        ? [join(dir, entry.name)]
        : [],
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

/** A node of the publish benchmark's 1 MB shape (seed 11): 40 Python files of ~12 KB, each starting with `prefix`. */
function smallNode(dir, prefix) {
  const next = random(11);
  mkdirSync(join(dir, 'node'), { recursive: true });
  writeFileSync(join(dir, 'pyproject.toml'), '[project]\nname = "bench-small"\nversion = "1.0.0"\n');
  for (let i = 0; i < 40; i++) writeFileSync(join(dir, 'node', `module_${i}.py`), prefix + pythonSource(next, 12_000));
  return dir;
}

export default async function scan() {
  const tree = generateTree();
  const out = join(tree.root, '..');
  const env = cliEnv(join(out, 'home'));
  // cold: every file scanned (--no-cache), as pack has no cache; warm: the second run of the same tree
  const scanArgs = (dir) => [BIN, 'scan', dir, '--json', '--no-cache'];
  const warmArgs = (dir) => [BIN, 'scan', dir, '--json'];
  const packArgs = [BIN, 'pack', tree.root, '--out', join(out, 'scan-bench.zip')];
  const scanTree = () => run(process.execPath, scanArgs(tree.root), { env });
  const plain = await inTurns({ scan: scanTree, pack: () => run(process.execPath, packArgs, { env }) });
  const [plainCpu, packCpu] = cpuOfCommands(
    [
      [process.execPath, scanArgs(tree.root)],
      [process.execPath, packArgs],
    ],
    { runs: CPU_RUNS, env },
  );
  for (const file of pythonFiles(tree.root)) writeFileSync(file, `${IMPORTS}${readFileSync(file, 'utf8')}`);
  const packParsed = () => run(process.execPath, packArgs, { env });
  await run(process.execPath, warmArgs(tree.root), { env }); // fills the cache
  const parsed = await inTurns({
    scan: scanTree,
    warm: () => run(process.execPath, warmArgs(tree.root), { env }),
    pack: packParsed,
  });
  const [parsedCpu] = cpuOfCommands([[process.execPath, scanArgs(tree.root)]], { runs: CPU_RUNS, env });
  // a name the resolution layer follows in every file: each module is parsed whole and resolved
  for (const file of pythonFiles(tree.root)) writeFileSync(file, `${RESOLVED}${readFileSync(file, 'utf8')}`);
  const whole = await inTurns({ scan: scanTree, pack: packParsed });
  const [wholeCpu] = cpuOfCommands([[process.execPath, scanArgs(tree.root)]], { runs: CPU_RUNS, env });

  const small = smallNode(join(out, 'small'), '');
  const smallParsed = smallNode(join(out, 'small-parsed'), IMPORTS);
  const fixed = [
    [process.execPath, ['-e', '0']],
    [process.execPath, scanArgs(small)],
    [process.execPath, scanArgs(smallParsed)],
  ];
  const [floor, smallTime, smallParsedTime] = timeCommands(fixed, { runs: 9, env });
  const [floorCpu, smallCpu, smallParsedCpu] = cpuOfCommands(fixed, { runs: 9, env });
  const cpu = (value) => `${ms(value)} CPU`;
  return {
    rows: [
      row(
        'scan: `nodereg scan` of the 2,000-file tree, time',
        ms(plain.scan),
        `nodereg pack of the same tree: ${ms(plain.pack)}`,
        plain.scan / plain.pack,
        '< 3 s',
        plain.scan < 3000,
      ),
      row(
        'scan: the same tree, every file parsed (imports sys, torch), cold (--no-cache)',
        ms(parsed.scan),
        `nodereg pack of the same tree: ${ms(parsed.pack)}`,
        parsed.scan / parsed.pack,
        '≤ 2× pack (issue 32)',
        parsed.scan <= 2 * parsed.pack,
      ),
      row(
        'scan: the same tree, every file parsed whole and resolved (imports subprocess too), cold',
        `${ms(whole.scan)} · ${cpu(wholeCpu)}`,
        `nodereg pack of the same tree: ${ms(whole.pack)} · ${cpu(packCpu)}`,
        whole.scan / whole.pack,
        '(what a whole parse costs)',
      ),
      row(
        'scan: the same, warm (each file found in the cache by its SHA-256)',
        ms(parsed.warm),
        `nodereg pack of the same tree: ${ms(parsed.pack)}`,
        parsed.warm / parsed.pack,
        '≤ 2× pack (issue 32)',
        parsed.warm <= 2 * parsed.pack,
      ),
      row(
        'scan: CPU time (user + sys), the plain tree',
        cpu(plainCpu),
        `nodereg pack: ${cpu(packCpu)}`,
        plainCpu / packCpu,
        '(steadier under load)',
      ),
      row(
        'scan: CPU time (user + sys), every file parsed',
        cpu(parsedCpu),
        `nodereg pack of the plain tree: ${cpu(packCpu)}`,
        parsedCpu / packCpu,
        '(steadier under load)',
      ),
      row(
        'scan: 1 MB node (40 files), no rule admitted: nothing parsed',
        `${ms(smallTime)} · ${cpu(smallCpu)}`,
        `node -e 0: ${ms(floor)} · ${cpu(floorCpu)}`,
        smallTime / floor,
        '(fixed cost: reads and requires tests)',
      ),
      row(
        'scan: 1 MB node, every file parsed (imports sys, torch)',
        `${ms(smallParsedTime)} · ${cpu(smallParsedCpu)}`,
        `node -e 0: ${ms(floor)} · ${cpu(floorCpu)}`,
        smallParsedTime / floor,
        '(fixed cost with WebAssembly, queries, parse)',
      ),
    ],
    notes: [
      `scan: the pack section's tree (${tree.files.toLocaleString('en')} files, ${(tree.source / 1e6).toFixed(1)} MB of Python source in 1,979 files); medians of ${RUNS} runs in turns after a warm-up round (CPU time: ${CPU_RUNS} runs); sets over 1 MiB of source are shared by one worker thread per core; the 1 MB node: medians of 9 runs in turns`,
    ],
  };
}
