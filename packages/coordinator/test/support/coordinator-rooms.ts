import type { RunStatus as Status } from '@trellis/core';
import { RunStatus } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { FakeClock } from '@trellis/testkit';
import { WorkerRegistry } from '../../src/registry/worker-registry.js';
import { Claims } from '../../src/server/claims.js';
import { createContext } from '../../src/server/coordinator-context.js';
import { HeartbeatReconcile } from '../../src/server/heartbeat-reconcile.js';
import { RunTracker } from '../../src/server/run-tracker.js';
import { StatusReports } from '../../src/server/status-reports.js';
import { WorkerSide } from '../../src/server/worker-side.js';
import { MemoryCoordinatorStore } from './memory-coordinator-store.js';

/**
 * One coordinator's context and rooms on `store` with `clock` (shared when several coordinators
 * share one store): the run updates and warnings it gives are collected.
 */
export const rooms = (store: MemoryCoordinatorStore, clock: FakeClock) => {
  const updates: DagRunRecord[] = [];
  const warnings: string[] = [];
  const ctx = createContext(
    {
      store,
      clock,
      logDir: '/logs',
      onRunUpdate: (r) => updates.push(structuredClone(r)),
      warn: (m) => warnings.push(m),
    },
    new WorkerRegistry(),
  );
  const tracker = new RunTracker(ctx);
  const reconcile = new HeartbeatReconcile(ctx, tracker);
  const workers = new WorkerSide(ctx, reconcile);
  return { ctx, tracker, reconcile, workers, updates, warnings, claims: new Claims(ctx, tracker) };
};

/**
 * The coordinator's rooms over an in-memory store whose saves can fail (`store`: another
 * coordinator's, for two on one store).
 */
export const setup = (store = new MemoryCoordinatorStore()) => {
  const { ctx, tracker, reconcile, workers, updates, warnings, claims } = rooms(
    store,
    new FakeClock('2026-03-01T10:00:00Z'),
  );
  /** A heartbeat of `workerId` listing `runs`, and its store work done. */
  const beat = async (
    workerId: string,
    runs: { ref: RunRef; parent?: RunRef }[] = [],
    incarnation = 'i1',
  ) => {
    const reply = workers.heartbeat({
      workerId,
      labels: {},
      capacity: 4,
      runningTasks: runs.map((r) => ({
        run: r.ref,
        root: r.ref,
        parent: r.parent ?? null,
        startedAt: '',
      })),
      incarnation,
      accepting: true,
    });
    await reconcile.settled();
    return reply;
  };
  return {
    store,
    ctx,
    tracker,
    workers,
    updates,
    warnings,
    beat,
    reports: new StatusReports(ctx, tracker),
    claims,
  };
};

export const ref = (dagRunId = 'r1'): RunRef => ({ name: 'job', dagRunId });

export const record = (id = 'r1', status: Status = RunStatus.Running, workerId = 'w1') =>
  ({
    name: 'job',
    dagRunId: id,
    root: ref(id),
    status,
    createdAt: '2026-03-01T09:00:00.000Z',
    queuedAt: '',
    startedAt: '2026-03-01T09:00:01.000Z',
    finishedAt: '',
    log: `/logs/job/${id}/run.log`,
    params: [],
    nodes: [],
    preconditions: [],
    error: '',
    queue: 'job',
    revision: 1,
    ...(status === RunStatus.Queued
      ? {}
      : { owner: { pid: 1, host: 'h', processStart: '', workerId } }),
  }) satisfies DagRunRecord;

export const report = (seq: number, rec: DagRunRecord, workerId = 'w1') => ({
  workerId,
  run: ref(rec.dagRunId),
  root: ref(rec.dagRunId),
  seq,
  recordJson: JSON.stringify(rec),
  snapshotJson: '',
});

/** A claim of run `r1` by `workerId`'s process `pid` on host `h`. */
export const claimOf = (workerId = 'w1', pid = 1) => ({
  workerId,
  run: ref(),
  root: ref(),
  host: 'h',
  pid,
  processStart: '',
});

/** A queued run `r1` on a dispatch queue of the coordinator `setup(store)` gives. */
export const queuedRun = (store?: MemoryCoordinatorStore) => {
  const c = setup(store);
  const queued = record('r1', RunStatus.Queued);
  c.store.put(queued);
  c.tracker.expect(queued, {});
  return c;
};
