// CLI start: `nodereg --version`, `--help` and `node show ID` (against `nodereg serve` on this
// machine, the node's id from NODEREG_REGISTRY) against a bare `node -e 0` (the floor).
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { cliEnv, cpuOfCommands, row, startServe, timeCommands, workDir } from './lib.js';
import { seedStore } from './seed-store.js';

const bin = resolve(import.meta.dirname, '../bin/nodereg.js');

export default async function startup() {
  // In turns, so a slow spell of a shared machine hits every command alike. Running any script file
  // at all costs more than `-e 0`; the empty file is shown so the ratios can be read fairly.
  const dir = workDir('startup');
  await seedStore(join(dir, 'data'), 1);
  const server = await startServe({
    dataDir: join(dir, 'data'),
    adminToken: `nrg_u_${randomBytes(16).toString('hex')}`,
  });
  let floor, emptyFile, version, help, show, cpu;
  try {
    const { nodes } = await (await fetch(`${server.url}/nodes?limit=1`)).json();
    // a fresh HOME: no profile is read; the registry comes from the environment
    const env = cliEnv(join(dir, 'home'), { NODEREG_REGISTRY: server.url });
    const commands = [
      [process.execPath, ['-e', '0']],
      [process.execPath, [resolve(import.meta.dirname, 'empty.mjs')]],
      [process.execPath, [bin, '--version']],
      [process.execPath, [bin, '--help']],
      [process.execPath, [bin, 'node', 'show', nodes[0].id]],
    ];
    [floor, emptyFile, version, help, show] = timeCommands(commands, { env });
    const [cpuFloor, , cpuVersion, , cpuShow] = cpuOfCommands(commands, { env });
    cpu = { floor: cpuFloor, version: cpuVersion, show: cpuShow };
  } finally {
    await server.stop();
  }
  return [
    row(
      'reference: `node empty.mjs`',
      `${emptyFile.toFixed(0)} ms`,
      `node -e 0: ${floor.toFixed(0)} ms`,
      emptyFile / floor,
      '(floor of any script)',
    ),
    row(
      'CLI start: `nodereg --version`',
      `${version.toFixed(0)} ms`,
      `node -e 0: ${floor.toFixed(0)} ms`,
      version / floor,
      '≤ 1.15×',
      version / floor <= 1.15,
    ),
    row(
      'CLI start: `nodereg --help`',
      `${help.toFixed(0)} ms`,
      `node -e 0: ${floor.toFixed(0)} ms`,
      help / floor,
      '≤ 1.8×',
      help / floor <= 1.8,
    ),
    row(
      'CLI: `nodereg node show ID` against a local server',
      `${show.toFixed(0)} ms`,
      `node -e 0: ${floor.toFixed(0)} ms`,
      show / floor,
      '≤ 2.0×',
      show / floor <= 2,
    ),
    row(
      'CLI start, CPU time: `nodereg --version`',
      `${cpu.version.toFixed(0)} ms`,
      `node -e 0: ${cpu.floor.toFixed(0)} ms`,
      cpu.version / cpu.floor,
      '(steadier under load) ≤ 1.15×',
      cpu.version / cpu.floor <= 1.15,
    ),
    row(
      'CLI, CPU time: `nodereg node show ID`',
      `${cpu.show.toFixed(0)} ms`,
      `node -e 0: ${cpu.floor.toFixed(0)} ms`,
      cpu.show / cpu.floor,
      '(steadier under load) ≤ 2.0×',
      cpu.show / cpu.floor <= 2,
    ),
  ];
}
