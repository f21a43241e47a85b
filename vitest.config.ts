import { configDefaults, defineConfig } from 'vitest/config';

// Files that bound memory or held bodies, or time PostgreSQL outages and races: run one at a time after
// the others, so no other test file takes their CPU. The rest run two at a time (2 cores). Latency
// bounds are not tests: bench/latency.js holds them.
const alone = [
  'test/postgres/outages.test.ts',
  'test/storage/s3.test.ts',
  'test/server/uploads/streamed-upload.test.ts',
  'test/package/pack-memory.test.ts',
  'test/postgres/ban-race.test.ts',
  'test/server/http/hostile-input.test.ts',
  'test/server/http/hostile-routes.test.ts',
  'test/server/uploads/attacks.test.ts',
  'test/server/uploads/memory-budget.test.ts',
  'test/server/memory.test.ts',
];

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
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...alone],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'alone', include: alone, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
