import { readdirSync, readFileSync } from 'node:fs';
import { configDefaults, defineConfig } from 'vitest/config';

// Files that bound memory or held bodies, or time PostgreSQL outages: run after the others, two at a time
// (2 cores), so that no third file takes their CPU. Each bounds the memory of its own process (a child
// server, or its own worker), which the file beside it does not move. Latency bounds are not tests:
// bench/latency.js holds them.
const alone = [
  'test/postgres/frozen-database.test.ts',
  'test/storage/s3.test.ts',
  'test/server/uploads/streamed-upload.test.ts',
  'test/package/pack-memory.test.ts',
  'test/server/http/hostile-input.test.ts',
  'test/server/http/hostile-routes.test.ts',
  'test/server/uploads/memory-budget.test.ts',
  'test/server/memory.test.ts',
];
// Files whose server clocks are short beside the CPU they ask (a 1.5 s headers timeout of uploads that
// trickle in; two instances racing for PostgreSQL locks under its 5 s deadline): last, one at a time.
const last = ['test/postgres/ban-race.test.ts', 'test/server/uploads/attacks.test.ts'];

// The files of these folders share their worker process with the files run before them in it (isolate:
// false): the server, the contract and the CLI are then loaded, compiled and warmed once per worker, not
// once per file. Every server owns its budgets (JSON bodies, upload memory), and test/postgres.ts and
// test/s3.ts start anew for each file. A file whose source touches what outlives it in that process runs
// in a fresh process of its own instead: the environment, the working dir, process listeners or signals,
// vi's mocks and timers (vi.waitFor only polls), or the process's memory figures. A helper that keeps
// state per file registers its hooks when the file calls it (useServe() of serve-helper.ts), since a
// module loads once per worker. The other folders stay one process per file until their files have been
// run together.
const SHARED_PROCESS_DIRS = [
  'accounts',
  'backup',
  'cli',
  'contract',
  'deploy',
  'docs',
  'incumbent',
  'launcher',
  'manage',
  'postgres',
  'proxy',
  'mirror',
  'package',
  'publish',
  'scan',
  'server',
  'storage',
  'trusted',
  'web',
];
const PROCESS_STATE =
  /process\.env(\.\w+|\[[^\]]+\])\s*(=[^=]|\?\?=|\|\|=)|delete process\.env|Object\.assign\(process\.env|\bvi\.(?!waitFor\b)\w+\(|process\.(chdir|emit|on|once|off|removeListener|addListener|prependListener|listeners|exitCode|umask|setMaxListeners)\b|(globalThis|global)\.\w+\s*=[^=]|memoryUsage|cpuUsage|resourceUsage|setGlobalDispatcher|process\.std(out|err)\.write\s*=/;
const sharedProcess = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .map((file) => `test/${file.split('\\').join('/')}`)
  .filter(
    (file) =>
      file.endsWith('.test.ts') &&
      SHARED_PROCESS_DIRS.some((dir) => file.startsWith(`test/${dir}/`)) &&
      !alone.includes(file) &&
      !last.includes(file) &&
      !PROCESS_STATE.test(readFileSync(file, 'utf8')),
  );

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'shared-process',
          include: sharedProcess,
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...alone, ...last, ...sharedProcess],
          maxWorkers: 2,
          // Beside shared-process (one pool of 2 workers): its files run first, each in a process of its own,
          // and no worker waits at a boundary between the two for the other's last file.
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'alone', include: alone, maxWorkers: 2, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'last', include: last, maxWorkers: 1, sequence: { groupOrder: 2 } } },
    ],
  },
});
