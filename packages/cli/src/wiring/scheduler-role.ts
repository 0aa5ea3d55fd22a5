import { join } from 'node:path';
import type { Clock } from '@trellis/core';
import {
  applyRetentionToAll,
  startSchedulerRole as startRole,
  type SchedulerStatus,
} from '@trellis/scheduler';
import type { FsDagStore } from '@trellis/store';
import { LeaseLock, currentOwner, processStartTime } from '@trellis/store';
import type { LeaderFacts } from './leader-lease.js';
import { asLeader } from './leader-scope.js';
import type { Runtime } from './runtime.js';

export type { SchedulerStatus } from '@trellis/scheduler';

/**
 * Wires the scheduler role of @trellis/scheduler (cron, queue processor, lost-run recovery,
 * daily retention, one scheduler per store by lease) over the runtime's store and run service,
 * in `start-all`, `trellis scheduler` and `trellis coordinator`. Ends when `signal` aborts. The
 * PostgreSQL lease (and `pg`) is loaded only with the PostgreSQL store.
 */
export const startSchedulerRole = async (
  rt: Runtime,
  defs: FsDagStore,
  clock: Clock,
  log: (line: string) => void,
  signal: AbortSignal,
): Promise<{ status: SchedulerStatus; done: Promise<void>; leader?: LeaderFacts }> => {
  // the PostgreSQL store: a lease row with a fencing token, shared by replicated coordinators
  const pg = rt.database
    ? (await import('./leader-lease.js')).pgLeadership(rt.database, rt.config, log, {
        clock,
        onRecordSaved: (r) => rt.transitions.recordSaved(r),
      })
    : undefined;
  // the leader's own writes: fenced by the lease token with the PostgreSQL store
  const writes = pg?.writes ?? rt.store;
  const q = rt.runs.queues;
  const role = startRole(
    {
      clock,
      lease:
        pg?.lease ??
        new LeaseLock({
          path: join(rt.config.paths.dataDir, 'scheduler', 'lock.json'),
          owner: currentOwner(),
          clock,
        }),
      ...(pg ? { fires: pg.fires, leaseEveryMs: pg.leaseEveryMs, leaseTtlMs: pg.leaseTtlMs } : {}),
      dags: () => defs.scheduled(),
      runs: {
        startLoaded: (dag, localDags, req) => rt.runs.startLoaded(dag, localDags, req),
        stopAll: (name) => rt.runs.stopAll(name),
        restart: (ref) => rt.runs.restart(ref),
        listRuns: (filter) => rt.store.listRuns(filter),
      },
      // queue hand-overs made by a pass swap records through the fenced store (leader-scope.ts)
      queues: pg
        ? {
            reconcile: () => asLeader(writes, () => q.reconcile()),
            runsEnded: (records) => asLeader(writes, () => q.runsEnded(records)),
            releaseQueues: () => q.releaseQueues(),
          }
        : q,
      lostRuns: {
        store: {
          findOrphanedRuns: () => rt.store.findOrphanedRuns(),
          saveRun: (r) => writes.saveRun(r),
        },
        clock,
        processes: { processStartTime },
      },
      retentionPass: () =>
        applyRetentionToAll({
          store: {
            cleanupAll: (days) => writes.cleanupAll(days),
            latestRun: (name) => rt.store.latestRun(name),
            getSnapshot: (ref) => rt.store.getSnapshot(ref),
          },
          dags: rt.dags,
          defaultDays: rt.config.histRetentionDays,
        }),
      log,
    },
    signal,
  );
  if (!pg) return role;
  // the lease's connection closes once the role released the lease
  const done = role.done.finally(() => pg.close().catch(() => undefined));
  return { ...role, done, leader: pg.facts };
};
