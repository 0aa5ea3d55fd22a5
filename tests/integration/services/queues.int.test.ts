import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, RunStatus, systemClock, type Clock, type IdGenerator } from '@trellis/core';
import type { EngineEvents } from '@trellis/engine';
import type { DagRunRecord } from '@trellis/spec';
import { runQueueProcessor, type LostRunsDeps } from '@trellis/scheduler';
import type { RunDispatcher } from '@trellis/services';
import { DagFileLoader, processStartTime } from '@trellis/store';
import { FakeClock } from '@trellis/testkit';
import { fakeDispatcher } from '../support/fake-dispatcher.js';
import {
  createTempHome,
  finishedRuns,
  localRunService,
  type TempHome,
} from '../support/local-run-service.js';

let t: TempHome;

const service = (
  o: {
    ledger?: boolean;
    queues?: { name: string; maxConcurrency: number }[];
    clock?: Clock;
    dispatcher?: RunDispatcher;
    ids?: IdGenerator;
  } = {},
) =>
  localRunService(t, {
    maxListeners: 0,
    queues: o.queues ?? [],
    processQueues: o.ledger ?? true,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.ids ? { ids: o.ids } : {}),
    ...(o.dispatcher ? { dispatcher: o.dispatcher } : {}),
  });

/** Lost-run recovery over `store`, as the scheduler's queue processor runs it. */
const lostRunsOf = (store: LostRunsDeps['store']): LostRunsDeps => ({
  store,
  clock: systemClock,
  processes: { processStartTime },
});

const dag = (name: string, yaml: string): void => t.dag(name, yaml);

/** Resolves with the record once the run is running (engine event). */
const runStarted = (events: EngineEvents, dagRunId: string): Promise<void> =>
  new Promise((resolve) => {
    const on = (r: DagRunRecord): void => {
      if (r.dagRunId === dagRunId) {
        events.off('run:started', on);
        resolve();
      }
    };
    events.on('run:started', on);
  });

beforeEach(() => {
  t = createTempHome('trellis-queues-');
});
afterEach(() => t.cleanup());

describe('queues', () => {
  it('runs 50 enqueued runs in FIFO order through a queue of maxConcurrency 2, never more at once', async () => {
    dag('job', 'queue: batch\nsteps:\n  - sleep 0.02\n');
    const { runs, events } = service({ queues: [{ name: 'batch', maxConcurrency: 2 }] });
    let active = 0;
    let peak = 0;
    const order: string[] = [];
    events.on('run:started', (r) => {
      active++;
      peak = Math.max(peak, active);
      expect(active).toBeLessThanOrEqual(2);
      order.push(r.dagRunId);
    });
    events.on('run:finished', () => active--);
    const all = finishedRuns(events, 50);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const s = await runs.start({ dag: 'job', trigger: 'enqueue' });
      expect(s.queued).toBe(true);
      expect(s.record.queue).toBe('batch');
      ids.push(s.record.dagRunId);
    }
    const done = await all;
    expect([...order].sort()).toEqual(ids);
    // FIFO: each run left the queue no later than every run enqueued after it
    const startedAt = new Map(done.map((r) => [r.dagRunId, r.startedAt]));
    const inQueueOrder = ids.map((id) => startedAt.get(id) ?? '');
    expect(inQueueOrder).toEqual([...inQueueOrder].sort());
    expect(peak).toBe(2);
    expect(done.every((r) => r.status === RunStatus.Succeeded)).toBe(true);
    expect(done.every((r) => r.queuedAt !== '' && r.startedAt >= r.queuedAt)).toBe(true);
  });

  it('queues a start beyond maxActiveRuns and starts it the moment a slot frees', async () => {
    dag('one', 'steps:\n  - name: wait\n    command: sleep 30\n');
    const { runs, events, store } = service();
    const first = await runs.start({ dag: 'one', dagRunId: 'a' });
    expect(first.queued).toBe(false);
    const second = await runs.start({ dag: 'one', dagRunId: 'b' });
    expect(second.queued).toBe(true);
    expect(await store.getRun({ name: 'one', dagRunId: 'b' })).toMatchObject({
      status: RunStatus.Queued,
      startedAt: '',
    });
    const bStarted = runStarted(events, 'b');
    await runs.stop({ name: 'one', dagRunId: 'a' });
    await bStarted;
    const b = await store.getRun({ name: 'one', dagRunId: 'b' });
    expect(b.status).toBe(RunStatus.Running);
    expect(b.queuedAt).not.toBe('');
    await runs.stop({ name: 'one', dagRunId: 'b' });
    expect((await second.done).status).toBe(RunStatus.Cancelled);
  });

  it('dequeues a waiting run (cancelled, kept in history) and refuses one that is not queued', async () => {
    dag('one', 'steps:\n  - name: wait\n    command: sleep 30\n');
    const { runs, events, store } = service();
    await runs.start({ dag: 'one', dagRunId: 'a' });
    await runs.start({ dag: 'one', dagRunId: 'b', trigger: 'enqueue' });
    await runs.start({ dag: 'one', dagRunId: 'c', trigger: 'enqueue' });
    await runs.dequeue({ name: 'one', dagRunId: 'b' });
    expect(await store.getRun({ name: 'one', dagRunId: 'b' })).toMatchObject({
      status: RunStatus.Cancelled,
      error: 'dequeued before it started',
    });
    await expect(runs.dequeue({ name: 'one', dagRunId: 'a' })).rejects.toMatchObject({
      code: ErrorCode.NotFound,
    });
    const cStarted = runStarted(events, 'c');
    await runs.stop({ name: 'one', dagRunId: 'a' });
    await cStarted; // c, not the dequeued b, got the slot
    expect((await store.getRun({ name: 'one', dagRunId: 'b' })).status).toBe(RunStatus.Cancelled);
    await runs.stop({ name: 'one', dagRunId: 'c' });
  });

  it('lets two DAGs share a custom queue and its cap', async () => {
    dag('a', 'queue: shared\nsteps:\n  - name: wait\n    command: sleep 30\n');
    dag('b', 'queue: shared\nsteps:\n  - "true"\n');
    const { runs, events } = service({ queues: [{ name: 'shared', maxConcurrency: 1 }] });
    const a = await runs.start({ dag: 'a', dagRunId: 'a1' });
    expect(a.queued).toBe(false);
    const b = await runs.start({ dag: 'b', dagRunId: 'b1' });
    expect(b.queued).toBe(true);
    const bStarted = runStarted(events, 'b1');
    await runs.stop({ name: 'a', dagRunId: 'a1' });
    await bStarted;
    expect((await b.done).status).toBe(RunStatus.Succeeded);
  });

  it('honours the cap from every trigger path: start, enqueue, inline spec, schedule, CLI-style start; singleton refuses', async () => {
    dag('one', 'steps:\n  - name: wait\n    command: sleep 30\n');
    const { runs, store } = service();
    const first = await runs.start({ dag: 'one', dagRunId: 'first' });
    expect(first.queued).toBe(false);
    const loaded = new DagFileLoader(t.dagsDir).load('one');
    const paths = [
      await runs.startLoaded(loaded.dag, loaded.localDags, {}),
      await runs.enqueue(loaded.dag, loaded.localDags, {}),
      await runs.startSpec({ spec: 'name: one\nsteps:\n  - "true"\n' }),
      await runs.startLoaded(loaded.dag, loaded.localDags, { trigger: 'schedule' }),
      await runs.start({ dag: 'one' }),
    ];
    expect(paths.map((p) => p.queued)).toEqual([true, true, true, true, true]);
    await expect(runs.start({ dag: 'one', singleton: true })).rejects.toMatchObject({
      code: ErrorCode.AlreadyRunning,
    });
    await expect(runs.retry({ name: 'one', dagRunId: 'first' })).rejects.toMatchObject({
      code: ErrorCode.AlreadyRunning,
    });
    expect(
      (await store.listRuns({ name: 'one', status: RunStatus.Running })).map((r) => r.dagRunId),
    ).toEqual(['first']);
    for (const p of paths) await runs.dequeue({ name: 'one', dagRunId: p.record.dagRunId });
    await runs.stop({ name: 'one', dagRunId: 'first' });
    await first.done;
  });

  it('counts runs from the store in a process without the ledger', async () => {
    dag('one', 'steps:\n  - name: wait\n    command: sleep 30\n');
    const owner = service();
    const first = await owner.runs.start({ dag: 'one', dagRunId: 'first' });
    const cli = service({ ledger: false });
    const second = await cli.runs.start({ dag: 'one', dagRunId: 'second' });
    expect(second.queued).toBe(true);
    await cli.runs.dequeue({ name: 'one', dagRunId: 'second' });
    await owner.runs.stop({ name: 'one', dagRunId: 'first' });
    await first.done;
  });

  it('decides against the queue as the store knows it without the ledger: FIFO, duplicate ids', async () => {
    dag('three', 'maxActiveRuns: 2\nsteps:\n  - name: wait\n    command: sleep 30\n');
    const cli = service({ ledger: false });
    const a = await cli.runs.start({ dag: 'three', dagRunId: 'a' });
    expect(a.queued).toBe(false);
    const q = await cli.runs.start({ dag: 'three', dagRunId: 'q', trigger: 'enqueue' });
    expect(q.queued).toBe(true);
    // a slot is free, but a run waits: a start goes behind it (strict FIFO)
    const b = await cli.runs.start({ dag: 'three', dagRunId: 'b' });
    expect(b.queued).toBe(true);
    await expect(cli.runs.start({ dag: 'three', dagRunId: 'a' })).rejects.toMatchObject({
      code: ErrorCode.AlreadyExists,
    });
    for (const id of ['q', 'b']) await cli.runs.dequeue({ name: 'three', dagRunId: id });
    await cli.runs.stop({ name: 'three', dagRunId: 'a' });
    await a.done;
  });
});

describe('admission under concurrency', () => {
  it('refuses a duplicate run id without touching the slot of the run that has it', async () => {
    dag('two', 'maxActiveRuns: 2\nsteps:\n  - name: wait\n    command: sleep 30\n');
    const { runs } = service();
    const x = await runs.start({ dag: 'two', dagRunId: 'x' });
    await expect(runs.start({ dag: 'two', dagRunId: 'x' })).rejects.toMatchObject({
      code: ErrorCode.AlreadyExists,
    });
    const y = await runs.start({ dag: 'two', dagRunId: 'y' });
    expect(y.queued).toBe(false);
    const z = await runs.start({ dag: 'two', dagRunId: 'z' });
    expect(z.queued).toBe(true); // x and y hold both slots
    await runs.dequeue({ name: 'two', dagRunId: 'z' });
    await runs.stopAll('two');
    await Promise.all([x.done, y.done]);
  });

  it('keeps FIFO for starts that arrive together while the queue is full', async () => {
    dag('one', 'steps:\n  - name: nap\n    command: sleep 0.05\n');
    const { runs, events } = service();
    const first = await runs.start({ dag: 'one', dagRunId: 'a' });
    const all = finishedRuns(events, 9);
    const rest = await Promise.all(
      Array.from({ length: 8 }, (_, i) => runs.start({ dag: 'one', dagRunId: `r${i}` })),
    );
    expect(rest.every((r) => r.queued)).toBe(true);
    await first.done;
    const done = await all;
    const byId = new Map(done.map((r) => [r.dagRunId, r]));
    const inQueueOrder = rest
      .map((r) => r.record)
      .sort((p, q) => (p.queuedAt < q.queuedAt ? -1 : p.queuedAt > q.queuedAt ? 1 : 0))
      .map((r) => byId.get(r.dagRunId)?.startedAt ?? '');
    expect(inQueueOrder).toEqual([...inQueueOrder].sort());
    // never two at once (maxActiveRuns 1)
    const spans = done.map((r) => [Date.parse(r.startedAt), Date.parse(r.finishedAt)] as const);
    spans.sort((p, q) => p[0] - q[0]);
    for (let i = 1; i < spans.length; i++)
      expect(spans[i]?.[0]).toBeGreaterThanOrEqual(spans[i - 1]?.[1] ?? 0);
  });

  it('lets only one of two concurrent singleton starts run', async () => {
    dag('three', 'maxActiveRuns: 3\nsteps:\n  - name: wait\n    command: sleep 30\n');
    const { runs } = service();
    const results = await Promise.allSettled([
      runs.start({ dag: 'three', singleton: true }),
      runs.start({ dag: 'three', singleton: true }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({
      reason: { code: ErrorCode.AlreadyRunning },
    });
    await runs.stopAll('three');
    for (const r of results) if (r.status === 'fulfilled') await r.value.done;
  });

  it('counts the runs it started before it ran the queues', async () => {
    dag('one', 'steps:\n  - name: wait\n    command: sleep 30\n');
    const { runs, store } = service({ ledger: false });
    const early = await runs.start({ dag: 'one', dagRunId: 'early' });
    expect(early.queued).toBe(false);
    const stop = new AbortController();
    let ticked: () => void = () => undefined;
    const firstPass = new Promise<void>((r) => (ticked = r));
    const loop = runQueueProcessor(runs.queues, lostRunsOf(store), systemClock, stop.signal, {
      intervalMs: 20,
      onTick: () => ticked(),
    });
    await firstPass; // the ledger is in place
    const late = await runs.start({ dag: 'one', dagRunId: 'late' });
    expect(late.queued).toBe(true);
    stop.abort();
    await loop;
    await runs.stopAll('one');
    await early.done;
  });
});

describe('runs for workers', () => {
  /** Workers that never report back: only the dispatcher port's side of them is scripted. */
  const silentWorkers = (ready: boolean) =>
    fakeDispatcher(ready ? null : 'no worker has labels gpu=true');

  it('keeps a run queued while no worker matches, and dispatches it when one joins', async () => {
    dag('gpu', 'workerSelector:\n  gpu: "true"\nsteps:\n  - "true"\n');
    const w = silentWorkers(false);
    const { runs, store } = service({ dispatcher: w.dispatcher });
    const s = await runs.start({ dag: 'gpu', dagRunId: 'g1' });
    expect(s.queued).toBe(true);
    expect(w.dispatched).toHaveLength(0);
    w.join();
    await expect.poll(() => w.dispatched.length).toBe(1);
    expect(w.dispatched[0]?.record.dagRunId).toBe('g1');
    expect((await store.getRun({ name: 'gpu', dagRunId: 'g1' })).status).toBe(RunStatus.Queued);
  });

  it('fails an activated run that no worker starts within 10 s and frees its slot', async () => {
    dag('gpu', 'workerSelector:\n  gpu: "true"\nsteps:\n  - "true"\n');
    const clock = new FakeClock('2026-03-01T10:00:00Z');
    const w = silentWorkers(true);
    const { runs, store } = service({ dispatcher: w.dispatcher, clock });
    await runs.start({ dag: 'gpu', dagRunId: 'g1' });
    const second = await runs.start({ dag: 'gpu', dagRunId: 'g2' });
    expect(second.queued).toBe(true);
    expect(w.dispatched.map((a) => a.record.dagRunId)).toEqual(['g1']);
    await clock.advanceBy(9_999);
    await runs.reconcileQueues();
    expect((await store.getRun({ name: 'gpu', dagRunId: 'g1' })).status).toBe(RunStatus.Queued);
    await clock.advanceBy(1);
    await runs.reconcileQueues();
    const g1 = await store.getRun({ name: 'gpu', dagRunId: 'g1' });
    expect(g1.status).toBe(RunStatus.Failed);
    expect(g1.error).toMatch(/did not become running within 10 s/);
    expect(w.cancelled).toEqual([{ ref: { name: 'gpu', dagRunId: 'g1' }, root: undefined }]);
    await expect.poll(() => w.dispatched.map((a) => a.record.dagRunId)).toEqual(['g1', 'g2']);
  });

  it('frees the slot of a remote run the moment the coordinator reports it final', async () => {
    dag('gpu', 'workerSelector:\n  gpu: "true"\nsteps:\n  - "true"\n');
    const w = silentWorkers(true);
    const { runs } = service({ dispatcher: w.dispatcher });
    await runs.start({ dag: 'gpu', dagRunId: 'g1' });
    await runs.start({ dag: 'gpu', dagRunId: 'g2' });
    const g1 = w.dispatched[0]?.record as DagRunRecord;
    w.report({ ...g1, status: RunStatus.Running });
    expect(w.dispatched).toHaveLength(1);
    w.report({ ...g1, status: RunStatus.Succeeded });
    await expect.poll(() => w.dispatched.length).toBe(2);
  });
});
