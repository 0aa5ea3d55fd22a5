import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';

/**
 * Checks a metrics exposition with the real `promtool check metrics`: parsable, and no lint
 * finding but the two the spec's names cause (gauges it names like counters).
 */
export const expectPromtoolClean = (exposition: string): void => {
  const lint = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  expect(lint.error).toBeUndefined();
  const problems = `${lint.stdout}${lint.stderr}`.trim().split('\n').sort();
  expect(problems).toEqual([
    'svc_dag_runs_queued_total non-counter metrics should not have "_total" suffix',
    'svc_dags_total non-counter metrics should not have "_total" suffix',
  ]);
  expect(lint.status).toBe(3); // lint findings only: 1 would be an unparsable exposition
};
