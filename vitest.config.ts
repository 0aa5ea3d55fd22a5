import { defineConfig } from 'vitest/config';

/**
 * Projects: `unit` = colocated *.test.ts (no I/O beyond temp files; scripts/ too), `int` = *.int.test.ts (real
 * processes, fs, services; those wiring several packages together live in tests/integration, and
 * tests/corpus runs the DAG corpus end to end),
 * `e2e` = tests/e2e and tests/docs/*.e2e.test.ts (the built binary).
 * The `@trellis/source` export condition makes workspace imports resolve to `src/` without a build.
 */
const shared = {
  resolve: { conditions: ['@trellis/source'] },
  ssr: { resolve: { conditions: ['@trellis/source'] } },
};

export default defineConfig({
  test: {
    // The default reporter, then a plain "N passed, N failed" line for CI (tests/support).
    reporters: ['default', './tests/support/summary-reporter.ts'],
    projects: [
      {
        ...shared,
        test: {
          name: 'unit',
          include: [
            'packages/*/src/**/*.test.ts',
            'packages/*/test/**/*.test.ts',
            'tests/docs/**/*.test.ts',
            'tests/support/**/*.test.ts',
            'scripts/**/*.test.ts',
          ],
          exclude: ['**/*.int.test.ts', '**/*.e2e.test.ts', '**/node_modules/**', '**/dist/**'],
        },
      },
      {
        ...shared,
        test: {
          name: 'int',
          include: [
            'packages/*/src/**/*.int.test.ts',
            'packages/*/test/**/*.int.test.ts',
            'tests/integration/**/*.int.test.ts',
            'tests/corpus/**/*.int.test.ts',
          ],
          // Upper bounds against hangs, not performance assertions: real processes and services
          // share two cores with the other test files.
          testTimeout: 30_000,
          hookTimeout: 30_000,
          exclude: ['**/node_modules/**', '**/dist/**'],
        },
      },
      {
        ...shared,
        test: {
          name: 'e2e',
          // tests/docs/*.e2e.test.ts run the docs' examples against the built binary
          include: [
            'tests/e2e/**/*.test.ts',
            'tests/faults/**/*.test.ts',
            'tests/docs/**/*.e2e.test.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          exclude: ['**/node_modules/**', '**/dist/**'],
        },
      },
    ],
  },
});
