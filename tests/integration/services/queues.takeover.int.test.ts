import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStatus, sequentialIdGenerator, systemClock } from '@trellis/core';
import { runQueueProcessor, type LostRunsDeps } from '@trellis/scheduler';
import { processStartTime } from '@trellis/store';
import {
  createTempHome,
  finishedRuns,
  localRunService,
  type TempHome,
} from '../support/local-run-service.js';

/**
 * Queues when a process takes them over (restart, or the scheduler role starting after the API
 * already admits runs): queued runs keep their FIFO order.
 */

let t: TempHome;

/** A run service of a process that does not run the queues until its queue processor does. */
const service = (o: { ids?: ReturnType<typeof sequentialIdGenerator> } = {}) =>
  localRunService(t, { processQueues: false, ...(o.ids ? { ids: o.ids } : {}) });

const lostRunsOf = (store: LostRunsDeps['store']): LostRunsDeps => ({
  store,
  clock: systemClock,
  processes: { processStartTime },
});

const dag = (name: string, yaml: string): void => t.dag(name, yaml);

beforeEach(() => {
  t = createTempHome('trellis-queues-takeover-');
});
afterEach(() => t.cleanup());

describe('queues taken over by a process', () => {
  it('keeps queued runs across a restart of the process, in their order', async () => {
    dag('job', 'steps:\n  - "true"\n');
    const ids = sequentialIdGenerator();
    const before = service({ ids }); // a process that does not run the queues
    const queued: string[] = [];
    for (let i = 0; i < 5; i++)
      queued.push((await before.runs.start({ dag: 'job', trigger: 'enqueue' })).record.dagRunId);
    expect((await before.store.listRuns({ name: 'job', status: RunStatus.Queued })).length).toBe(5);
    const after = service();
    const order: string[] = [];
    after.events.on('run:started', (r) => order.push(r.dagRunId));
    const all = finishedRuns(after.events, 5);
    const stop = new AbortController();
    const loop = runQueueProcessor(
      after.runs.queues,
      lostRunsOf(after.store),
      systemClock,
      stop.signal,
      { intervalMs: 50 },
    );
    await all;
    stop.abort();
    await loop;
    expect(order).toEqual(queued);
  });

  it('keeps FIFO for a run whose record was being written while the queue process took over', async () => {
    dag('job', 'maxActiveRuns: 1\nsteps:\n  - "true"\n');
    const { runs, events, store } = service({ ids: sequentialIdGenerator() });
    const order: string[] = [];
    events.on('run:started', (r) => order.push(r.dagRunId));
    const all = finishedRuns(events, 3);
    // As in `start-all`, where the API serves before the scheduler role holds its lease: the
    // first enqueue decides without the ledger, and its record lands only after the queue
    // processor's first pass read the store and installed the ledger.
    let atWrite!: () => void;
    const writing = new Promise<void>((resolve) => (atWrite = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const createRun = store.createRun.bind(store);
    let hold = true;
    store.createRun = async (...args) => {
      if (hold) {
        hold = false;
        atWrite();
        await released;
      }
      return createRun(...args);
    };
    const enqueue = async (): Promise<string> =>
      (await runs.start({ dag: 'job', trigger: 'enqueue' })).record.dagRunId;
    const first = enqueue();
    await writing; // decided without a ledger; its record is not written yet
    await runs.queues.reconcile(); // the first pass installs the ledger without it
    release();
    const ids = [await first, await enqueue(), await enqueue()];
    await runs.queues.reconcile(); // a later pass, which places anything the first one missed
    await all;
    expect(order).toEqual(ids);
  });
});
