// `npm test` (decision 472): runs the given command (vitest) with `biome check` and `tsc` beside it. The
// checks' output is held and printed after the command's, under a line naming the check that failed, so
// that a type or lint error is the last thing shown rather than lost in the tests' output.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHECKS = [
  ['biome', ['check']],
  ['tsc', ['-p', 'tsconfig.test.json']],
];

/** Runs `command`; its output is held (`held`) or shown as it comes. Resolves to its exit code and held output. */
function started(command, args, held) {
  const child = spawn(command, args, { stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  let output = '';
  if (held) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => {
    child.on('error', (error) => resolve({ code: 1, output: `${error.message}\n` }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

/** Runs `main` (command and arguments) with `checks` beside it; 1 when any failed, else 0. */
export async function runBeside(main, checks = CHECKS, show = (text) => process.stderr.write(text)) {
  const running = checks.map(([command, args]) => ({
    name: [command, ...args].join(' '),
    done: started(command, args, true),
  }));
  const { code } = await started(main[0], main.slice(1), false);
  let failed = code !== 0;
  for (const { name, done } of running) {
    const check = await done;
    if (check.code === 0) continue;
    failed = true;
    show(`${check.output}\nnpm test: \`${name}\` failed (exit ${check.code}); its output is above\n`);
  }
  return failed ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await runBeside(process.argv.slice(2));
