// CLI start: `nodereg --version` and `--help` against a bare `node -e 0` (the floor).
import { resolve } from 'node:path';
import { row, timeCommands } from './lib.js';

const bin = resolve(import.meta.dirname, '../bin/nodereg.js');

export default async function startup() {
  // In turns, so a slow spell of a shared machine hits every command alike. Running any script file
  // at all costs more than `-e 0`; the empty file is shown so the ratios can be read fairly.
  const [floor, emptyFile, version, help] = timeCommands([
    [process.execPath, ['-e', '0']],
    [process.execPath, [resolve(import.meta.dirname, 'empty.mjs')]],
    [process.execPath, [bin, '--version']],
    [process.execPath, [bin, '--help']],
  ]);
  return [
    row('reference: `node empty.mjs`', `${emptyFile.toFixed(0)} ms`, `node -e 0: ${floor.toFixed(0)} ms`, emptyFile / floor, '(floor of any script)'),
    row('CLI start: `nodereg --version`', `${version.toFixed(0)} ms`, `node -e 0: ${floor.toFixed(0)} ms`, version / floor, '≤ 1.3×', version / floor <= 1.3),
    row('CLI start: `nodereg --help`', `${help.toFixed(0)} ms`, `node -e 0: ${floor.toFixed(0)} ms`, help / floor, '≤ 1.8×', help / floor <= 1.8),
  ];
}
