import type { Reporter, TestModule, TestSuite } from 'vitest/node';

/** What the summary line counts. */
export interface Summary {
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * Counts a run. A failed test is one failure; so is every file or suite that failed on its own
 * (a module that did not load, a `beforeAll` or `afterAll` that threw), because its tests are
 * then reported skipped or passed and would otherwise hide it; and every unhandled error.
 */
export const summarize = (
  testModules: readonly TestModule[],
  unhandledErrors: readonly unknown[],
): Summary => {
  const s: Summary = { passed: 0, failed: unhandledErrors.length, skipped: 0 };
  for (const mod of testModules) {
    let failedTests = 0;
    for (const test of mod.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') s.passed++;
      else if (state === 'failed') failedTests++;
      else s.skipped++;
    }
    const owners: (TestModule | TestSuite)[] = [mod, ...mod.children.allSuites()];
    const ownFailures = owners.filter((o) => o.errors().length > 0).length;
    // A failed file with no failed test and no error of its own still failed.
    const unexplained = mod.state() === 'failed' && failedTests + ownFailures === 0 ? 1 : 0;
    s.failed += failedTests + ownFailures + unexplained;
  }
  return s;
};

/**
 * Prints `N passed, N failed[, N skipped]` as the very last line of a run, the plain summary CI
 * reads (vitest's own summary is not one of the formats it knows). Failed files and hooks and
 * unhandled errors count as failures (see {@link summarize}), so a broken file never looks green.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[], unhandledErrors: readonly unknown[]): void {
    const { passed, failed, skipped } = summarize(testModules, unhandledErrors);
    process.stdout.write(
      `\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}
