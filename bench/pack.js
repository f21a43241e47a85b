// Pack: `nodereg pack` of a generated 2,000-file, ~60 MB tree (~28 MB of Python source, 2–20 KB a
// file, and 20 random binaries of 1–2 MB named .safetensors and .png) against Info-ZIP `zip` at its
// default level told to store the same already-compressed formats (the peer), and against reading
// the tree (`tar cf - . | cat > /dev/null`: GNU tar skips reading when its output is /dev/null itself).
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, cliEnv, cpuOfCommands, median, mib, ms, peakRss, random, row, workDir } from './lib.js';

const RUNS = 5;
// The formats our packer stores, told to zip as well: the packer's own list, from the build.
export { STORED_EXTENSIONS as STORED } from '../dist/package/zip.js';
import { STORED_EXTENSIONS as STORED } from '../dist/package/zip.js';

const WORDS = [
  'self',
  'value',
  'tensor',
  'image',
  'model',
  'config',
  'result',
  'index',
  'batch',
  'width',
  'height',
  'device',
  'dtype',
  'path',
  'node',
  'inputs',
  'outputs',
  'latent',
  'mask',
  'scale',
  'steps',
  'seed',
  'sampler',
  'weight',
  'bias',
  'cache',
  'prompt',
  'return',
];

/** Plausible, valid Python (every file parses): imports, classes, functions, comments; about `size` bytes, deterministic for the generator. */
export function pythonSource(next, size) {
  const pick = (list) => list[Math.floor(next() * list.length)];
  // a word standing alone as a name: `return` is a keyword there, so it gets Python's trailing underscore
  const word = () => {
    const picked = pick(WORDS);
    return picked === 'return' ? 'return_' : picked;
  };
  const name = () => `${pick(WORDS)}_${pick(WORDS)}`;
  const lines = ['import os', 'import math', `from .${word()} import ${name()}, ${name()}`, ''];
  let length = lines.join('\n').length;
  while (length < size) {
    const block =
      next() < 0.3
        ? [
            `class ${pick(WORDS)[0].toUpperCase()}${pick(WORDS)}${Math.floor(next() * 100)}:`,
            `    """${pick(WORDS)} ${pick(WORDS)} for the ${pick(WORDS)} ${pick(WORDS)}."""`,
            '',
          ]
        : [
            `def ${name()}(${name()}, ${name()}=${Math.floor(next() * 64)}):`,
            `    # ${pick(WORDS)} the ${pick(WORDS)} before ${pick(WORDS)}`,
            `    ${name()} = ${name()}.${word()}(${name()}, ${word()}=${(next() * 10).toFixed(3)})`,
            `    if ${name()} is None or ${name()} > ${Math.floor(next() * 1000)}:`,
            `        raise ValueError(f"{${name()}} must be a ${pick(WORDS)}")`,
            `    return [${name()} * ${word()} for ${word()} in range(${Math.floor(next() * 32)})]`,
            '',
          ];
    const text = block.join('\n') + '\n';
    lines.push(text);
    length += text.length + 1;
  }
  // whole blocks only, so that every file parses as Python (the size is a lower bound)
  return lines.join('\n');
}

/** The tree, generated afresh (seed 7): returns its dir and totals. */
export function generateTree() {
  const root = join(workDir('pack'), 'tree');
  const next = random(7);
  let source = 0;
  let binary = 0;
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, 'pyproject.toml'),
    '[project]\nname = "bench-node"\nversion = "1.0.0"\ndescription = "A generated node to pack"\n\n[tool.nodereg]\npublisher = "bench"\n',
  );
  for (let i = 0; i < 1979; i++) {
    const dir = join(root, 'bench_node', `part_${i % 20}`, `group_${i % 7}`);
    mkdirSync(dir, { recursive: true });
    const size = Math.round(2048 + 18 * 1024 * Math.sqrt(next())); // 2–20 KB, mean ~14 KB
    writeFileSync(join(dir, `${WORDS[i % WORDS.length]}_${i}.py`), pythonSource(next, size));
    source += size;
  }
  mkdirSync(join(root, 'models'), { recursive: true });
  mkdirSync(join(root, 'assets'), { recursive: true });
  for (let i = 0; i < 20; i++) {
    const size = Math.round((1 + next()) * 1024 * 1024);
    const bytes = Buffer.allocUnsafe(size + 3);
    for (let j = 0; j < size; j += 4) bytes.writeUInt32LE(Math.floor(next() * 2 ** 32), j);
    writeFileSync(
      join(root, i < 10 ? 'models' : 'assets', i < 10 ? `weights_${i}.safetensors` : `preview_${i}.png`),
      bytes.subarray(0, size),
    );
    binary += size;
  }
  return { root, source, binary, files: 1979 + 20 + 1 };
}

/** Runs a command to its end, sampling its peak RSS (VmHWM); resolves to {ms, rss}. */
export function run(command, args, options = {}) {
  return new Promise((resolveRun, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
    let rss = 0;
    let stderr = '';
    const sample = () => (rss = Math.max(rss, peakRss(child.pid) ?? 0));
    const timer = setInterval(sample, 5);
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      clearInterval(timer);
      const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${stderr.trim()}`));
      else resolveRun({ ms: elapsed, rss });
    });
  });
}

export default async function pack() {
  const tree = generateTree();
  const out = join(tree.root, '..');
  const ours = join(out, 'ours.zip');
  const peer = join(out, 'peer.zip');
  const env = cliEnv(join(out, 'home'));
  const zipArgs = ['-r', '-q', '-X', '-D', '-n', STORED.map((e) => `.${e}`).join(':'), peer, '.'];
  // Each writes a new file: zip would update an archive already there, and a rename over an
  // existing file makes ext4 write the new one out at once (auto_da_alloc).
  const commands = {
    ours: () => (
      rmSync(ours, { force: true }), run(process.execPath, [BIN, 'pack', tree.root, '--out', ours], { env })
    ),
    zip: () => (rmSync(peer, { force: true }), run('zip', zipArgs, { cwd: tree.root })),
    tar: () => run('bash', ['-c', 'tar cf - . | cat > /dev/null'], { cwd: tree.root }),
  };
  const samples = { ours: [], zip: [], tar: [] };
  let rss = 0;
  for (let i = 0; i <= RUNS; i++) {
    // in turns, so a slow spell of the machine hits all three alike; the first round warms the page cache
    for (const [name, command] of Object.entries(commands)) {
      const result = await command();
      if (i === 0) continue;
      samples[name].push(result.ms);
      if (name === 'ours') rss = Math.max(rss, result.rss);
    }
  }
  const [time, zipTime, tarTime] = [median(samples.ours), median(samples.zip), median(samples.tar)];
  // CPU time (user + system, all threads), steadier than wall time on a shared machine.
  const [cpu, zipCpu] = cpuOfCommands(
    [
      ['bash', ['-c', 'rm -f "$1" && exec "$0" "$2" pack "$3" --out "$1"', process.execPath, ours, BIN, tree.root]],
      ['bash', ['-c', 'rm -f "$0" && exec zip "$@"', peer, ...zipArgs]],
    ],
    { runs: RUNS, env, cwd: tree.root },
  );
  const size = statSync(ours).size;
  const zipSize = statSync(peer).size;
  const rows = [
    row(
      'pack: `nodereg pack`, time',
      ms(time),
      `zip -r -X -D -n <stored formats>: ${ms(zipTime)}`,
      time / zipTime,
      '≤ 1.0× zip',
      time <= zipTime,
    ),
    row(
      'pack: `nodereg pack`, CPU time (user + system)',
      ms(cpu),
      `zip: ${ms(zipCpu)}`,
      cpu / zipCpu,
      '(steadier under load; ours on all cores, zip on one)',
    ),
    row(
      'pack: `nodereg pack`, time vs reading the tree',
      ms(time),
      `tar cf - . | cat > /dev/null: ${ms(tarTime)}`,
      time / tarTime,
      '(floor: reading)',
    ),
    row(
      'pack: archive size',
      mib(size),
      `zip's: ${mib(zipSize)}`,
      size / zipSize,
      '≤ 1.02× zip',
      size / zipSize <= 1.02,
    ),
    row(
      'pack: peak RSS of `nodereg pack`',
      mib(rss),
      'the target, 150 MiB',
      rss / (150 * 2 ** 20),
      '< 150 MiB',
      rss < 150 * 2 ** 20,
    ),
  ];
  const notes = [
    `pack: tree of ${tree.files.toLocaleString('en')} files, ${mib(tree.source + tree.binary)} (${mib(tree.source)} of Python source in 1,979 files of 2–20 KB, 20 random binaries of 1–2 MB as .safetensors and .png), generated with a fixed seed; medians of ${RUNS} runs in turns after a warm-up round (page cache warm), each writing a new archive; zip at its default level (6; ours deflates at 4) with -D (no directory entries, as ours); peak RSS sampled from /proc/PID/status VmHWM every 5 ms`,
  ];
  return { rows, notes };
}
