import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startVitest, type TestModule } from 'vitest/node';
import { summarize, type Summary } from './summary-reporter.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** Runs one fixture file in its own vitest and summarizes the run. */
const summaryOf = async (file: string): Promise<Summary> => {
  let result: Summary | undefined;
  const vitest = await startVitest('test', [], {
    root: fixtures,
    config: false,
    include: [file],
    watch: false,
    reporters: [
      {
        onTestRunEnd: (mods: readonly TestModule[], errors: readonly unknown[]) => {
          result = summarize(mods, errors);
        },
      },
    ],
  });
  await vitest.close();
  if (!result) throw new Error(`the fixture run of ${file} ended without a summary`);
  return result;
};

describe('summary reporter', () => {
  it('counts passed and skipped tests of a green file', async () => {
    expect(await summaryOf('green.fixture.ts')).toEqual({ passed: 1, failed: 0, skipped: 1 });
  });

  it('counts a file whose beforeAll failed as failed, not only skipped', async () => {
    expect(await summaryOf('before-all-fails.fixture.ts')).toEqual({
      passed: 0,
      failed: 1,
      skipped: 2,
    });
  });

  it('counts a failed afterAll as a failure although every test passed', async () => {
    expect(await summaryOf('after-all-fails.fixture.ts')).toMatchObject({ passed: 1, failed: 1 });
  });
});
