// The only module that exits. `--version` is answered before anything else is loaded.
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const version: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${version}\n`);
} else {
  const { run } = await import('./program.js');
  const code = await run(argv, version);
  process.exit(code);
}
