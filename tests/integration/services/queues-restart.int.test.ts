import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { fakeDispatcher } from '../support/fake-dispatcher.js';
import { createTempHome, localRunService, type TempHome } from '../support/local-run-service.js';

/** The queue process after a restart: what it adopts from the store and how it fills its queues. */
let t: TempHome;

beforeEach(() => {
  t = createTempHome('trellis-queues-restart-');
});
afterEach(() => t.cleanup());

describe('queues after a restart', () => {
  it('after a restart, hands a queue the capacity of its DAG: a running remote run is adopted and waiting runs start up to maxActiveRuns', async () => {
    t.dag('gpu', 'maxActiveRuns: 3\nworkerSelector:\n  gpu: "true"\nsteps:\n  - "true"\n');
    // Before the restart: five runs queued, the first one then taken by a worker (its record says so).
    const before = localRunService(t, { processQueues: false });
    for (const id of ['g1', 'g2', 'g3', 'g4', 'g5'])
      await before.runs.start({ dag: 'gpu', dagRunId: id, trigger: 'enqueue' });
    const g1 = await before.store.getRun({ name: 'gpu', dagRunId: 'g1' });
    await before.store.saveRun({
      ...g1,
      status: RunStatus.Running,
      startedAt: new Date().toISOString(),
      owner: { pid: 999_999, host: 'worker-host', processStart: '', workerId: 'w1' },
      revision: g1.revision + 1,
    });
    // The restarted queue process: its first pass adopts g1 and fills the two slots left.
    const w = fakeDispatcher(null); // workers ready, never reporting on their own
    const dispatchedIds = (n: number): Promise<string[]> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (w.dispatched.length >= n) resolve(w.dispatched.map((a) => a.record.dagRunId));
          else void w.nextDispatch().then(check);
        };
        check();
      });
    const { runs } = localRunService(t, { processQueues: true, dispatcher: w.dispatcher });
    const two = dispatchedIds(2);
    await runs.reconcileQueues();
    expect(await two).toEqual(['g2', 'g3']);
    // Full (g1, g2, g3): a run enqueued now waits behind g4 and g5.
    const g6 = await runs.start({ dag: 'gpu', dagRunId: 'g6', trigger: 'enqueue' });
    expect(g6.queued).toBe(true);
    expect(w.dispatched).toHaveLength(2);
    // g1 ends on its worker: its slot goes to g4, the head of the queue.
    const three = dispatchedIds(3);
    w.report({ ...g1, status: RunStatus.Succeeded, revision: g1.revision + 2 });
    expect(await three).toEqual(['g2', 'g3', 'g4']);
  });
});
