// Publish: end-to-end `nodereg publish` of a 1 MB and a 100 MB node to a local `nodereg serve` (POST,
// upload, Active) as CI runs it: NODEREG_TOKEN and NODEREG_REGISTRY in the environment, a fresh HOME,
// so no profile is read. Wall time, its phases, and the peak RSS of the CLI and of the server.
// Phases from the `--verbose` request lines, stamped as they arrive: before the POST (start, reading the
// project, the scan and the pack, which run at once, with GET /limits alongside), POST, upload, and after
// the upload's answer (report, exit). What the first phase is made of comes from `nodereg --version`,
// `scan` and `pack` timed on their own (each of the last two reads the project too), beside Info-ZIP's
// zip of the same tree. CPU time (user +
// system) of whole runs is measured in separate runs, in turns with `node -e 0`. For the 1 MB node, the
// least a publish must do (bench/publish-floor.js: start, read, the scan's text gate, pack, POST, PUT,
// with no CLI around them) is timed the same way, as the floor the end-to-end row is bounded by, and so is
// a bare client (bench/publish-bare.js: Node's built-ins only, the bytes of a publish and nothing else).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pythonSource, STORED } from './pack.js';
import { build } from 'esbuild';
import {
  BIN,
  cliEnv,
  cpuMs,
  getJsonOnce,
  median,
  mib,
  ms,
  peakRss,
  random,
  row,
  startFloor,
  startServe,
  timeCommands,
  workDir,
} from './lib.js';

const NODES = [
  // 1 MB of files: 40 Python files of ~12 KB and a 0.5 MB image (stored)
  {
    name: '1 MB',
    id: 'bench-small',
    runs: 7,
    source: { files: 40, size: 12_000 },
    binary: { name: 'web/preview.png', size: 512 * 1024 },
  },
  // 100 MB: the same source and a 99.5 MB weights file (stored, not deflated)
  {
    name: '100 MB',
    id: 'bench-large',
    runs: 3,
    source: { files: 40, size: 12_000 },
    binary: { name: 'models/weights.safetensors', size: 99.5 * 2 ** 20 },
  },
];

function writeNode(dir, node) {
  const next = random(11);
  mkdirSync(join(dir, node.id), { recursive: true });
  for (let i = 0; i < node.source.files; i++)
    writeFileSync(join(dir, node.id, `module_${i}.py`), pythonSource(next, node.source.size));
  mkdirSync(join(dir, dirname(node.binary.name)), { recursive: true });
  writeFileSync(join(dir, node.binary.name), randomBytes(node.binary.size));
}

const setVersion = (dir, node, version) =>
  writeFileSync(
    join(dir, 'pyproject.toml'),
    `[project]\nname = "${node.id}"\nversion = "${version}"\ndescription = "A generated node to publish"\nlicense = "MIT"\n\n[tool.nodereg]\npublisher = "bench"\n`,
  );

/** One `nodereg publish --verbose`: wall time, when each request line arrived, and the CLI's peak RSS. */
function publishOnce(dir, env) {
  return new Promise((resolveRun, reject) => {
    const started = process.hrtime.bigint();
    const at = () => Number(process.hrtime.bigint() - started) / 1e6;
    const child = spawn(process.execPath, [BIN, '--verbose', 'publish', dir], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const marks = {};
    let stderr = '';
    let pendingLine = '';
    let rss = 0;
    const timer = setInterval(() => (rss = Math.max(rss, peakRss(child.pid) ?? 0)), 5);
    child.stderr.on('data', (chunk) => {
      const now = at();
      stderr += chunk;
      const lines = (pendingLine + chunk).split('\n');
      pendingLine = lines.pop();
      for (const line of lines) {
        if (/^→ GET /.test(line)) marks.getStart ??= now;
        else if (/^← 200 GET /.test(line)) marks.getEnd ??= now;
        else if (/^→ POST /.test(line)) marks.postStart ??= now;
        else if (/^← 201 POST /.test(line)) marks.postEnd ??= now;
        else if (/^→ PUT /.test(line)) marks.putStart ??= now;
        else if (/^← 200 PUT /.test(line)) marks.putEnd ??= now;
      }
    });
    child.on('exit', (code) => {
      clearInterval(timer);
      const total = at();
      if (code !== 0) return reject(new Error(`nodereg publish exited with ${code}: ${stderr.trim().slice(-400)}`));
      if (Object.keys(marks).length !== 6)
        return reject(new Error(`nodereg publish --verbose did not log its requests: ${stderr.slice(-400)}`));
      resolveRun({ total, ...marks, rss });
    });
  });
}

/** CPU time (user + system, ms) of one run of a command, from bash's `times`; the command must exit 0. */
function cpuOfRun(command, args, env) {
  const result = spawnSync('bash', ['-c', '"$@" > /dev/null 2>&1 || exit 1; times', 'bench', command, ...args], {
    env,
    encoding: 'utf8',
  });
  const match = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/m.exec(result.stdout.trim().split('\n').pop() ?? '');
  if (result.status !== 0 || !match) throw new Error(`${command} ${args.join(' ')} failed`);
  return (Number(match[1]) * 60 + Number(match[2]) + Number(match[3]) * 60 + Number(match[4])) * 1000;
}

export default async function publish() {
  const work = workDir('publish');
  const adminToken = `nrg_u_${randomBytes(16).toString('hex')}`;
  const server = await startServe({ dataDir: join(work, 'data'), adminToken });
  // The same registry without its scan, for the bare client only: what the scan before the answer costs.
  const unscanned = await startServe({ dataDir: join(work, 'data-unscanned'), adminToken, args: ['--scan', 'off'] });
  // A server that only stores the bytes (bench/store-only-server.js), for the bare client: what is left
  // of a publish with no registry work at all.
  mkdirSync(join(work, 'store-only'), { recursive: true });
  const storeOnly = await startFloor('store-only-server.js', join(work, 'store-only'));
  const rows = [];
  const notes = [];
  try {
    for (const registry of [server, unscanned]) {
      const created = await fetch(`${registry.url}/publishers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'bench', name: 'Bench' }),
      });
      if (created.status !== 201) throw new Error(`POST /publishers: ${created.status} ${await created.text()}`);
    }
    const env = cliEnv(join(work, 'home'), { NODEREG_TOKEN: adminToken, NODEREG_REGISTRY: server.url });
    const floorScript = join(work, 'floor.js');
    const bareClient = join(work, 'bare.js');
    for (const [entry, outfile] of [
      ['publish-floor.js', floorScript],
      ['publish-bare.js', bareClient],
    ]) {
      await build({
        entryPoints: [resolve(import.meta.dirname, entry)],
        outfile,
        bundle: true,
        format: 'esm',
        platform: 'node',
        logLevel: 'warning',
      });
    }

    for (const node of NODES) {
      const dir = join(work, node.id);
      writeNode(dir, node);
      setVersion(dir, node, '0.0.1');
      // Start, scan and pack on their own, in turns (pack writes beside the tree, never into it), and
      // Info-ZIP's zip of the same tree, the pack's peer (bench/pack.js), started through bash to remove its last archive.
      const zipOut = join(work, `${node.id}-zip.zip`);
      const [floor, start, scan, pack, zip] = timeCommands(
        [
          [process.execPath, ['-e', '0']],
          [process.execPath, [BIN, '--version']],
          [process.execPath, [BIN, 'scan', dir]],
          [process.execPath, [BIN, 'pack', dir, '--out', join(work, `${node.id}.zip`)]],
          [
            'bash',
            [
              '-c',
              'rm -f "$0" && exec zip "$@"',
              zipOut,
              '-r',
              '-q',
              '-X',
              '-D',
              '-n',
              STORED.map((e) => `.${e}`).join(':'),
              zipOut,
              '.',
            ],
          ],
        ],
        { runs: node.runs, env, cwd: dir },
      );
      const results = [];
      for (let i = 1; i <= node.runs; i++) {
        setVersion(dir, node, `1.0.${i}`);
        results.push(await publishOnce(dir, env));
      }
      // CPU time of whole runs, in turns with node -e 0 (versions 2.0.x)
      const cpu = { floor: [], publish: [], server: [] };
      for (let i = 1; i <= node.runs; i++) {
        cpu.floor.push(cpuOfRun(process.execPath, ['-e', '0'], env));
        setVersion(dir, node, `2.0.${i}`);
        const serverBefore = cpuMs(server.pid);
        cpu.publish.push(cpuOfRun(process.execPath, [BIN, 'publish', dir], env));
        cpu.server.push(cpuMs(server.pid) - serverBefore);
      }
      // A fresh connection: the runs above block this event loop with spawnSync, so a kept-alive socket the
      // server has since closed would be reused before its close is seen ('other side closed').
      const version = await getJsonOnce(`${server.url}/nodes/${node.id}/versions/2.0.${node.runs}`);
      if (version.status !== 'NodeVersionStatusActive')
        throw new Error(`${node.id} 2.0.${node.runs} is ${version.status}, not Active`);
      const m = (key) => median(results.map((r) => (typeof key === 'function' ? key(r) : r[key])));
      const total = m('total');
      const beforePost = m('postStart');
      const limitsFrom = m('getStart');
      const limits = m((r) => r.getEnd - r.getStart);
      const post = m((r) => r.postEnd - r.postStart);
      const upload = m((r) => r.putEnd - r.putStart);
      const after = m((r) => r.total - r.putEnd);
      const cliRss = Math.max(...results.map((r) => r.rss));
      const phases =
        `before the POST ${ms(beforePost)}: start, reading, scan and pack (alone: start ${ms(start)}, scan ${ms(scan)}, pack ${ms(pack)}, Info-ZIP's zip of the tree ${ms(zip)}), ` +
        `with GET /limits alongside (from ${ms(limitsFrom)}, ${ms(limits)}) · POST ${ms(post)} · upload ${ms(upload)} · after the answer ${ms(after)}`;
      const [cpuFloor, cpuPublish] = [median(cpu.floor), median(cpu.publish)];
      if (node.name === '1 MB') {
        rows.push(
          row(
            `publish: ${node.name} node, end to end`,
            ms(total),
            `node -e 0: ${ms(floor)}`,
            total / floor,
            '≤ 3× node -e 0',
            total / floor <= 3,
          ),
        );
        rows.push(
          row(
            `publish: ${node.name} node, CPU time of the CLI`,
            ms(cpuPublish),
            `node -e 0: ${ms(cpuFloor)}`,
            cpuPublish / cpuFloor,
            '(steadier under load)',
          ),
        );
      } else {
        rows.push(
          row(
            `publish: ${node.name} node, end to end`,
            ms(total),
            `\`nodereg pack\` of it alone: ${ms(pack)}`,
            total / pack,
            '(reference)',
          ),
        );
      }
      rows.push(
        row(
          `publish: ${node.name} node, peak RSS of the CLI`,
          mib(cliRss),
          `archive: ${mib(version.archive_size)}`,
          cliRss / version.archive_size,
          '(reference: streamed, never held whole)',
        ),
      );
      notes.push(`publish ${node.name} (archive ${mib(version.archive_size)}, median of ${node.runs}): ${phases}`);
      notes.push(
        `publish ${node.name}: CPU time of the CLI ${ms(cpuPublish)} (node -e 0: ${ms(cpuFloor)}), of \`nodereg serve\` per publish ${ms(median(cpu.server))} (its POST, upload check, scan worker)`,
      );
      notes.push(`publish ${node.name}: peak RSS of \`nodereg serve\` so far ${mib(peakRss(server.pid) ?? 0)}`);
      if (node.name === '1 MB') {
        // The floor script in turns with node -e 0: the wall time of each of its steps (FLOOR_UNTIL; versions
        // 3.<step>.x), then CPU time of the whole script, its own and the server's.
        const steps = ['start', 'read', 'scan', 'pack', 'post', ''];
        const floorRun = {
          bare: [],
          steps: steps.map(() => []),
          client: [],
          unscanned: [],
          storeOnly: [],
          cpu: [],
          cpuBare: [],
          server: [],
        };
        const wallOf = (args, extra = {}) => {
          const started = process.hrtime.bigint();
          const result = spawnSync(process.execPath, args, {
            env: { ...env, ...extra },
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          if (result.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${result.stderr}`);
          return Number(process.hrtime.bigint() - started) / 1e6;
        };
        const floorArgs = (step, i) => [floorScript, dir, 'bench', node.id, `3.${step}.${i}`];
        for (let i = 0; i <= node.runs; i++) {
          const bare = wallOf(['-e', '0']);
          const walls = steps.map((step, s) => wallOf(floorArgs(s, i), { FLOOR_UNTIL: step }));
          const client = wallOf([bareClient, dir, 'bench', node.id, `4.0.${i}`]);
          const unscannedClient = wallOf([bareClient, dir, 'bench', node.id, `4.0.${i}`], {
            NODEREG_REGISTRY: unscanned.url,
          });
          const storeOnlyClient = wallOf([bareClient, dir, 'bench', node.id, `4.0.${i}`], {
            NODEREG_REGISTRY: storeOnly.url,
          });
          if (i === 0) continue; // a warm-up round
          floorRun.bare.push(bare);
          floorRun.client.push(client);
          floorRun.unscanned.push(unscannedClient);
          floorRun.storeOnly.push(storeOnlyClient);
          walls.forEach((wall, s) => floorRun.steps[s].push(wall));
          floorRun.cpuBare.push(cpuOfRun(process.execPath, ['-e', '0'], env));
          const serverBefore = cpuMs(server.pid);
          floorRun.cpu.push(cpuOfRun(process.execPath, floorArgs(steps.length, i), env));
          floorRun.server.push(cpuMs(server.pid) - serverBefore);
        }
        const bare = median(floorRun.bare);
        const walls = floorRun.steps.map(median);
        const least = walls.at(-1);
        const [leastCpu, bareCpu] = [median(floorRun.cpu), median(floorRun.cpuBare)];
        // each step's own time: the median of its run less the run before it, in the same round
        const own = (s) => (s ? median(floorRun.steps[s].map((wall, i) => wall - floorRun.steps[s - 1][i])) : walls[0]);
        const added = [
          'start with its built-ins (http, zlib, crypto) and the scanner and packer modules',
          'list and read the files',
          "the scan's text gate",
          'pack',
          'POST',
          'PUT',
        ].map((what, s) => `${what} ${s ? '+' : ''}${ms(own(s))}`);
        rows.push(
          row(
            'publish: 1 MB node, the least a publish must do (bench/publish-floor.js)',
            ms(least),
            `node -e 0: ${ms(bare)}`,
            least / bare,
            '(the floor of the row above: start, read, scan gate, pack, POST, PUT)',
          ),
        );
        const client = median(floorRun.client);
        rows.push(
          row(
            'publish: 1 MB node, a bare client (bench/publish-bare.js)',
            ms(client),
            `node -e 0: ${ms(bare)}`,
            client / bare,
            '(built-ins only: read, deflate, POST, PUT; no scan, manifest, git or limits)',
          ),
        );
        const unscannedClient = median(floorRun.unscanned);
        rows.push(
          row(
            'publish: 1 MB node, the bare client to `serve --scan off`',
            ms(unscannedClient),
            `node -e 0: ${ms(bare)}`,
            unscannedClient / bare,
            "(what the registry's scan before its answer adds to the row above)",
          ),
        );
        const storeOnlyClient = median(floorRun.storeOnly);
        rows.push(
          row(
            'publish: 1 MB node, the bare client to a server that only stores the bytes',
            ms(storeOnlyClient),
            `node -e 0: ${ms(bare)}`,
            storeOnlyClient / bare,
            '(bench/store-only-server.js: no checks, database or scan; the floor of any publish of these bytes here)',
          ),
        );
        notes.push(
          `publish 1 MB, the floor (bench/publish-floor.js, no CLI; medians of ${node.runs}): ${added.join(' · ')}`,
        );
        notes.push(
          `publish 1 MB, the floor: CPU time ${ms(leastCpu)} (node -e 0: ${ms(bareCpu)}, ${(leastCpu / bareCpu).toFixed(2)}×), of \`nodereg serve\` ${ms(median(floorRun.server))} per publish; ` +
            'nodereg publish adds to it the CLI: its modules (the client, its answer checks, the manifest with its generated request check, semver, smol-toml, the file-set rules), the manifest and file-set rules run, git ls-files, GET /limits',
        );
      }
    }
  } finally {
    await Promise.all([server.stop(), unscanned.stop(), storeOnly.stop()]);
  }
  // What the packages on the publish path cost to load here, each on its own over `node -e 0`, loaded
  // the way the CLI loads them (ignore and yauzl with require: src/package/cjs.ts).
  const loads = [
    ['zod', 'import'],
    ['smol-toml', 'import'],
    ['ignore', 'require'],
    ['yauzl', 'require'],
    ['web-tree-sitter', 'import'],
  ];
  const code = ([name, how]) =>
    how === 'import'
      ? `await import('${name}')`
      : `import { createRequire } from 'node:module'; createRequire(import.meta.url)('${name}')`;
  const [floor, ...each] = timeCommands(
    [
      [process.execPath, ['-e', '0']],
      ...loads.map((load) => [process.execPath, ['--input-type=module', '-e', code(load)]]),
    ],
    {
      runs: 9,
      cwd: resolve(import.meta.dirname, '..'),
    },
  );
  notes.push(
    `publish: loading each package alone costs, over \`node -e 0\` (${ms(floor)}): ${loads.map(([name, how], i) => `${name} (${how}) +${ms(Math.max(0, each[i] - floor))}`).join(', ')}`,
  );
  notes.push(
    'publish: CLI and server on the same machine (loopback); the token and registry come from NODEREG_TOKEN and NODEREG_REGISTRY with a fresh HOME; CPU time of the CLI is its own, that of the server is read from /proc',
  );
  return { rows, notes };
}
