import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RunStatus } from '@trellis/core';
import { makeRecord } from './run-record.js';

/**
 * Writes a finished top-level run `dagRunId` of DAG `name` under the data folder of `home` the way
 * the file store writes it (record and snapshot; the run index is rebuilt on first read), created,
 * started and finished at `at` (ISO), with final `status` and revision 3. Seeds history fast, for
 * benchmarks and scale tests, without a store.
 */
export const writeFinishedRun = (
  home: string,
  name: string,
  dagRunId: string,
  at: string,
  status: RunStatus = RunStatus.Succeeded,
): void => {
  const dir = join(home, 'data', 'runs', name, dagRunId);
  mkdirSync(dir, { recursive: true });
  const { revision: _, ...fields } = makeRecord({
    name,
    dagRunId,
    status,
    createdAt: at,
    startedAt: at,
    finishedAt: at,
  });
  // revision first, as the store writes it: a status file's first bytes name its revision
  // (packages/store/src/runs/status-file.ts)
  writeFileSync(join(dir, 'status.json'), JSON.stringify({ revision: 3, ...fields }));
  writeFileSync(join(dir, 'dag.json'), JSON.stringify({ dag: { name, steps: [] }, localDags: [] }));
  // noted as a write of the DAG's runs, as the store notes each (packages/store/src/runs/dag-changes.ts)
  appendFileSync(join(home, 'data', 'runs', name, '.changes'), '+');
};
