import { describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { RunReads, type RunReadStore } from '../runs/run-reads.js';
import { InMemoryRunEvents } from './in-memory-run-events.js';
import { RecordTransitions } from './record-transitions.js';
import { waitForFinalRun } from './run-wait.js';

const ref: RunRef = { name: 'd', dagRunId: 'r' };
const record = (status: RunStatus, error = '') =>
  ({ ...ref, root: ref, status, queue: 'd', error, nodes: [] }) as unknown as DagRunRecord;

/** A store holding one run, counting its reads; `onRead` runs after each read. */
const storeOf = (initial: DagRunRecord, onRead: (n: number) => void = () => undefined) => {
  const state = { run: initial, reads: 0 };
  const store = {
    getRun: () => {
      state.reads++;
      const r = state.run;
      onRead(state.reads);
      return Promise.resolve(r);
    },
  } as unknown as RunReadStore;
  return { state, reads: new RunReads(store) };
};

describe('waitForFinalRun', () => {
  it('answers a woken waiter with the record just saved, without reading it back', async () => {
    const events = new InMemoryRunEvents({ clock: systemClock });
    const finals = new RecordTransitions(events);
    const { state, reads } = storeOf(record(RunStatus.Running));
    finals.recordSaved(record(RunStatus.Running));
    const waiting = waitForFinalRun({ reads, events, clock: systemClock, finals }, ref, 60_000);
    await expect.poll(() => state.reads).toBe(2); // read, subscribed, read again
    const saved = record(RunStatus.Failed, 'exit status 3');
    state.run = record(RunStatus.Running); // the store would still answer running: not asked
    finals.recordSaved(saved);
    await expect(waiting).resolves.toBe(saved);
    expect(state.reads).toBe(2);
  });

  it('reads the store when woken without the saved record at hand', async () => {
    const events = new InMemoryRunEvents({ clock: systemClock });
    const { state, reads } = storeOf(record(RunStatus.Running));
    const waiting = waitForFinalRun({ reads, events, clock: systemClock }, ref, 60_000);
    await expect.poll(() => state.reads).toBe(2);
    state.run = record(RunStatus.Succeeded);
    events.publish({ type: 'run:finished', dag: 'd', dagRunId: 'r', data: { status: 4 } });
    await expect(waiting).resolves.toMatchObject({ status: RunStatus.Succeeded });
    expect(state.reads).toBe(3);
  });

  it('at the timeout answers the current state from the store', async () => {
    const events = new InMemoryRunEvents({ clock: systemClock });
    const finals = new RecordTransitions(events);
    const { state, reads } = storeOf(record(RunStatus.Running));
    const r = await waitForFinalRun({ reads, events, clock: systemClock, finals }, ref, 20);
    expect(r.status).toBe(RunStatus.Running);
    expect(state.reads).toBe(3);
  });
});
