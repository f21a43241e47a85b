// CLI start: `nodereg --version`, `--help` and `node show ID` (against `nodereg serve` on this
// machine, the node's id from NODEREG_REGISTRY) against a bare `node -e 0` (the floor), and beside
// them the floors of the one path (bench/startup-floors.js): what its parts cost with nothing of ours.
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { cliEnv, cpuOfCommands, row, startServe, timeCommands, workDir } from './lib.js';
import { seedStore } from './seed-store.js';
import { buildFloors } from './startup-floors.js';

const bin = resolve(import.meta.dirname, '../bin/nodereg.js');

/** Wall and CPU medians (ms) of each command, by name, run in turns. */
async function measure(dir) {
  const floors = await buildFloors(join(dir, 'floors'));
  await seedStore(join(dir, 'data'), 1);
  const server = await startServe({
    dataDir: join(dir, 'data'),
    adminToken: `nrg_u_${randomBytes(16).toString('hex')}`,
  });
  try {
    const { nodes } = await (await fetch(`${server.url}/nodes?limit=1`)).json();
    // a fresh HOME: no profile is read; the registry comes from the environment
    const env = cliEnv(join(dir, 'home'), { NODEREG_REGISTRY: server.url });
    // In turns, so a slow spell of a shared machine hits every command alike. Running any script file
    // at all costs more than `-e 0`; the empty file is shown so the ratios can be read fairly.
    const commands = {
      floor: ['-e', '0'],
      emptyFile: [resolve(import.meta.dirname, 'empty.mjs')],
      version: [bin, '--version'],
      help: [bin, '--help'],
      show: [bin, 'node', 'show', nodes[0].id],
      parserFloor: [floors.version, '--version'],
      showFloor: [floors['node-show'], 'show', nodes[0].id],
    };
    const list = Object.values(commands).map((args) => [process.execPath, args]);
    const byName = (values) => Object.fromEntries(Object.keys(commands).map((name, i) => [name, values[i]]));
    return { wall: byName(timeCommands(list, { env })), cpu: byName(cpuOfCommands(list, { env })) };
  } finally {
    await server.stop();
  }
}

export default async function startup() {
  const { wall, cpu } = await measure(workDir('startup'));
  const ms = (value) => `${value.toFixed(0)} ms`;
  const against = (figures) => `node -e 0: ${ms(figures.floor)}`;
  const wallRow = (name, key, target, limit) =>
    row(name, ms(wall[key]), against(wall), wall[key] / wall.floor, target, limit && wall[key] / wall.floor <= limit);
  const cpuRow = (name, key, target, limit) =>
    row(name, ms(cpu[key]), against(cpu), cpu[key] / cpu.floor, target, limit && cpu[key] / cpu.floor <= limit);
  return [
    wallRow('reference: `node empty.mjs`', 'emptyFile', '(floor of any script)'),
    wallRow('CLI start: `nodereg --version`', 'version', '≤ 1.15×', 1.15),
    wallRow('CLI start: `nodereg --help`', 'help', '≤ 1.8×', 1.8),
    wallRow('CLI: `nodereg node show ID` against a local server', 'show', '≤ 2.0×', 2),
    cpuRow('CLI start, CPU time: `nodereg --version`', 'version', '(steadier under load) ≤ 1.15×', 1.15),
    cpuRow('CLI, CPU time: `nodereg node show ID`', 'show', '(steadier under load) ≤ 2.0×', 2),
    wallRow('floor: commander alone printing a version, bundled as the CLI is', 'parserFloor', '(under `--version`)'),
    cpuRow('floor, CPU time: commander alone printing a version', 'parserFloor', '(under `--version`)'),
    wallRow(
      'floor: commander, the two GETs of `node show`, their answer checks, printed',
      'showFloor',
      '(under `node show`)',
    ),
    cpuRow('floor, CPU time: commander, the two GETs, their answer checks', 'showFloor', '(under `node show`)'),
  ];
}
