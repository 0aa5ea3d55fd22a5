import { createMetrics, toLiveWorkers, type Metrics, type RunFacts } from '@trellis/api';
import { countWaitingForWorker } from '@trellis/services';
import { RunStatus, systemClock } from '@trellis/core';
import type { FsDagStore } from '@trellis/store';
import { VERSION } from '../version.js';
import type { Runtime } from './runtime.js';
import type { LeaderFacts } from './leader-lease.js';
import { wireLeadershipMetrics } from './leadership-metrics.js';
import type { SchedulerStatus } from './scheduler-role.js';

/**
 * The gauges' run listings use the indexes in memory when read from disk less than this long ago
 * (this process's runs at once, another process's within a second): a scrape over 1,000 DAGs
 * stats no index file.
 */
const maxStaleMs = 1000;

/**
 * The metrics of a serving process, over its store, DAGs, scheduler and fleet, fed with every
 * run it sees: engine events of the runs executed here and the coordinator's updates of the runs
 * of workers. Call before anything can start a run (the scheduler): the run counters start from
 * the store's history and count each run once from there. The history (every run kept, a read
 * of every DAG's index, and a histogram series per DAG) is read once `listening` resolves, so
 * that start-up work does not delay the first answers; a scrape before then waits for it.
 */
export const serveMetrics = (
  rt: Runtime,
  dags: FsDagStore,
  scheduler: () => { status: SchedulerStatus; leader?: LeaderFacts } | undefined,
  startedAt: Date,
  warn: (message: string) => void,
  listening: Promise<unknown>,
): Metrics => {
  const { store, fleet } = rt;
  const metrics = createMetrics({
    version: VERSION,
    buildDate: '',
    clock: systemClock,
    startedAt,
    warn,
    sources: {
      runningRuns: async () =>
        (await store.listRuns({ status: RunStatus.Running, includeChildren: true, maxStaleMs }))
          .length,
      queuedRuns: async () => {
        const out: Record<string, number> = {};
        const queued = await store.listRuns({
          status: RunStatus.Queued,
          includeChildren: true,
          maxStaleMs,
        });
        for (const r of queued) out[r.queue || r.name] = (out[r.queue || r.name] ?? 0) + 1;
        return out;
      },
      dagCount: async () =>
        (await dags.list({ page: 1, perPage: 1, sort: 'name', order: 'asc' })).total,
      schedulerRunning: () => scheduler()?.status.running() ?? false,
      history: async (): Promise<RunFacts[]> => {
        await listening;
        return store.listRuns({ includeChildren: true });
      },
      storeWriteErrors: () => store.writeErrors.counts(),
      ...(fleet
        ? {
            fleet: {
              workers: () =>
                fleet.workers().map((w) => ({
                  id: w.id,
                  health: w.health,
                  capacity: w.capacity,
                  busy: w.runningTasks.length,
                })),
              queueDepths: () => fleet.dispatcher.depths(),
              runsWaitingForWorker: () =>
                countWaitingForWorker(store, toLiveWorkers(fleet.workers())),
            },
          }
        : {}),
    },
  });
  rt.events.on('run:started', (r) => metrics.observeRun(r));
  rt.events.on('run:finished', (r) => metrics.observeRun(r));
  if (fleet) {
    fleet.onClaimed = (ms) => metrics.recordDispatchLatency(ms);
    fleet.dispatcher.onRunUpdate((r) => metrics.observeRun(r));
  }
  if (rt.database) wireLeadershipMetrics(metrics, rt.database, scheduler);
  return metrics;
};
