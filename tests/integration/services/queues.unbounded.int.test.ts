import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DagRunRecord } from '@trellis/spec';
import {
  createTempHome,
  finishedRuns,
  localRunService,
  type TempHome,
} from '../support/local-run-service.js';

/**
 * Admission in a process that does not run the queues (a follower of replicated coordinators, a
 * server without the scheduler role): a queue without a limit (`maxActiveRuns: -1`) has no slot
 * to share, so its starts do not take turns. They did, one store write after another, and a burst
 * of starts on a loaded database queued its answers behind each other for over a minute (the HA
 * fault test's follower, docs/decisions.md).
 */

let t: TempHome;
beforeEach(() => {
  t = createTempHome('trellis-queues-unbounded-');
});
afterEach(() => t.cleanup());

/** The store's createRun held for `id` until `release()`; `calls` lists the runs it was asked for. */
const gateCreate = (
  store: { createRun: (r: DagRunRecord, s: never) => Promise<void> },
  id: string,
) => {
  const calls: string[] = [];
  let release = (): void => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const create = store.createRun.bind(store);
  store.createRun = async (record, snapshot) => {
    calls.push(record.dagRunId);
    if (record.dagRunId === id) await gate;
    return create(record, snapshot);
  };
  return { calls, release };
};

describe('admission outside the queue process', () => {
  it('lets a start of an unbounded queue through while an earlier one still writes its record', async () => {
    t.dag('free', 'maxActiveRuns: -1\nsteps:\n  - "true"\n');
    const { runs, store, events } = localRunService(t, { processQueues: false });
    const g = gateCreate(store, 'a');
    const ended = finishedRuns(events, 2);
    const a = runs.start({ dag: 'free', dagRunId: 'a', trigger: 'start' });
    const b = runs.start({ dag: 'free', dagRunId: 'b', trigger: 'start' });
    // b's record is written while a's is held: b did not wait for a's turn
    await expect.poll(() => g.calls, { timeout: 10_000 }).toEqual(['a', 'b']);
    expect((await b).record.dagRunId).toBe('b');
    g.release();
    expect((await a).record.dagRunId).toBe('a');
    expect((await ended).map((r) => r.status).sort()).toEqual([4, 4]);
  });

  it('still takes turns in a queue with a limit (its slots are decided one at a time)', async () => {
    t.dag('one', 'maxActiveRuns: 1\nsteps:\n  - "true"\n');
    const { runs, store } = localRunService(t, { processQueues: false });
    const g = gateCreate(store, 'a');
    const a = runs.start({ dag: 'one', dagRunId: 'a', trigger: 'start' });
    await expect.poll(() => g.calls).toEqual(['a']);
    const b = runs.start({ dag: 'one', dagRunId: 'b', trigger: 'start' });
    g.release();
    await a;
    await b;
    expect(g.calls).toEqual(['a', 'b']);
  });
});
