import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints `N passed, N failed[, N skipped]` as the very last line of a run, the plain summary CI
 * reads (vitest's own summary is not one of the formats it knows). Failed files (a module that
 * did not load) and unhandled errors count as failures, so a broken file can never look green.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[], unhandledErrors: readonly unknown[]): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const mod of testModules) {
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    process.stdout.write(
      `\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}
