import { describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import type { Dag, DagRunRecord } from '@trellis/spec';
import type { DagRunSummary } from '../dags/dag-catalog-port.js';
import { countWaitingForWorker, explainWait, type WaitReasonDeps } from './wait-reason.js';

const dag = (over: Partial<Dag> = {}) =>
  ({ name: 'job', maxActiveRuns: 1, workerSelector: {}, ...over }) as Dag;
const summary = (dagRunId: string, status: RunStatus, name = 'job', queue = '') =>
  ({ name, dagRunId, status, queue }) as DagRunSummary;
const queued = (dagRunId: string) =>
  ({ name: 'job', dagRunId, status: RunStatus.Queued, queue: '' }) as DagRunRecord;

/** A store of summaries (newest first, as the index lists them) and one DAG snapshot. */
const deps = (d: Dag, runs: DagRunSummary[], queues: WaitReasonDeps['queues'] = []) => ({
  listRuns: ({ status }: { status: RunStatus }) =>
    Promise.resolve(runs.filter((r) => r.status === status)),
  getSnapshot: () => Promise.resolve({ dag: d, localDags: [] }),
  queues,
});

describe('why a queued run waits', () => {
  it('gives nothing for a run that is not queued', async () => {
    const run = { ...queued('r1'), status: RunStatus.Running };
    expect(await explainWait(deps(dag(), []), run, { dagSuspended: false })).toBeUndefined();
  });

  it('counts its place oldest first, and says there is no limit for maxActiveRuns -1', async () => {
    const d = dag({ maxActiveRuns: -1 });
    const runs = [summary('r3', RunStatus.Queued), summary('r2', RunStatus.Queued)];
    const reason = await explainWait(deps(d, runs), queued('r3'), { dagSuspended: false });
    expect(reason).toMatchObject({ kind: 'queue', position: 2, capacity: null, occupancy: 0 });
    expect(reason?.message).toMatch(/^position 2 of 2 in queue "job" \(no limit\)/);
  });

  it('says no worker is live, naming the selector, before any other reason', async () => {
    const d = dag({ workerSelector: { gpu: 'true' } });
    const runs = [summary('r1', RunStatus.Running), summary('r2', RunStatus.Queued)];
    const reason = await explainWait(deps(d, runs), queued('r2'), {
      liveWorkers: [],
      dagSuspended: false,
    });
    expect(reason).toMatchObject({ kind: 'no-worker', liveWorkerLabels: [] });
    expect(reason?.message).toMatch(/workerSelector gpu=true \(no worker is live\)/);
  });

  it('is not a worker problem when a live worker matches, nor without a coordinator', async () => {
    const d = dag({ workerSelector: { gpu: 'true' }, maxActiveRuns: 2 });
    const runs = [summary('r2', RunStatus.Queued)];
    const live = [{ id: 'w', labels: { gpu: 'true', zone: 'a' } }];
    for (const liveWorkers of [live, undefined]) {
      const reason = await explainWait(deps(d, runs), queued('r2'), {
        liveWorkers,
        dagSuspended: false,
      });
      expect(reason).toMatchObject({ kind: 'queue', selector: { gpu: 'true' } });
    }
  });

  it('uses a custom queue from config, where the one-at-a-time rule does not apply', async () => {
    const d = dag({ queue: 'batch' });
    const runs = [summary('r1', RunStatus.Running, 'job', 'batch')];
    const reason = await explainWait(
      deps(d, runs, [{ name: 'batch', maxConcurrency: 1 }]),
      { ...queued('r2'), queue: 'batch' },
      { dagSuspended: false },
    );
    expect(reason).toMatchObject({ kind: 'queue', queue: 'batch', capacity: 1, occupancy: 1 });
  });

  it('counts queued runs whose selector no live worker matches', async () => {
    const d = dag({ workerSelector: { gpu: 'true' } });
    const runs = [summary('r1', RunStatus.Queued), summary('r2', RunStatus.Queued)];
    expect(await countWaitingForWorker(deps(d, runs), [{ id: 'w', labels: {} }])).toBe(2);
    expect(await countWaitingForWorker(deps(d, runs), [{ id: 'w', labels: { gpu: 'true' } }])).toBe(
      0,
    );
    expect(await countWaitingForWorker(deps(dag(), runs), [])).toBe(0);
  });
});
