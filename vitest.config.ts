import { configDefaults, defineConfig } from 'vitest/config';

// Files that bound latency (/healthz p99), memory or held bodies, or race on PostgreSQL: run one at a
// time after the others, so no other test file takes their CPU. The rest run two at a time (2 cores).
const alone = [
  'test/e2e/outages.test.ts',
  'test/e2e/s3-storage.test.ts',
  'test/e2e/upload-memory.test.ts',
  'test/package/pack-memory.test.ts',
  'test/reliability/ban-race-postgres.test.ts',
  'test/reliability/hostile-input.test.ts',
  'test/reliability/hostile-routes.test.ts',
  'test/reliability/upload-attacks.test.ts',
  'test/reliability/upload-memory-budget.test.ts',
  'test/server/kept-reads.test.ts',
  'test/server/memory.test.ts',
  'test/server/proxy-responsive.test.ts',
  'test/server/scan.test.ts',
  'test/server/version-list-turns.test.ts',
  'test/server/zip-names.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...alone], maxWorkers: 2, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'alone', include: alone, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
