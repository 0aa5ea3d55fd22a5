import { join } from 'node:path';
import { RunStatus, type Clock } from '@trellis/core';
import { CronScheduler, runQueueProcessor, type ScheduledDag } from '@trellis/scheduler';
import { applyRetentionToAll, type FsDagDefinitions } from '@trellis/services';
import { LeaseLock, currentOwner } from '@trellis/store';
import type { Runtime } from './runtime.js';

/** How often the holder renews its lease, and a standby looks whether it is free. */
const LEASE_EVERY_MS = 5_000;
/** The queue loop's pass interval; health fails when no pass completed for this many passes. */
const QUEUE_PASS_MS = 1_000;
const STALL_PASSES = 30;
/** The retention pass: first a minute after this process became the scheduler, then daily. */
const RETENTION_FIRST_MS = 60_000;
const RETENTION_EVERY_MS = 24 * 3_600_000;

/** The scheduler role's state, for /health and `svc_scheduler_running`. */
export interface SchedulerStatus {
  /** True while this process holds the scheduler lease and its loops run. */
  readonly running: () => boolean;
  /** False when this process is the scheduler but its loop stopped completing passes. */
  readonly alive: () => boolean;
}

/**
 * The scheduler role (ARCHITECTURE.md section 1: cron loop, queue processor, zombie detector,
 * and the daily retention pass over every DAG's history),
 * in `start-all` and `trellis scheduler`. Only one process per store acts as the scheduler: the
 * others wait for the lease (a dead holder cannot keep it). Ends when `signal` aborts.
 */
export const startSchedulerRole = (
  rt: Runtime,
  defs: FsDagDefinitions,
  clock: Clock,
  log: (line: string) => void,
  signal: AbortSignal,
): { status: SchedulerStatus; done: Promise<void> } => {
  const lock = new LeaseLock({
    path: join(rt.config.paths.dataDir, 'scheduler', 'lock.json'),
    owner: currentOwner(),
    clock,
  });
  let holding = false;
  let lastPass = clock.now().getTime();
  const status: SchedulerStatus = {
    running: () => holding,
    alive: () => !holding || clock.now().getTime() - lastPass < QUEUE_PASS_MS * STALL_PASSES,
  };
  const cron = new CronScheduler({
    clock,
    dags: () => defs.scheduled(),
    actions: {
      start: async (d: ScheduledDag) => {
        // A DAG whose previous scheduled run still waits gets no second one on top.
        const waiting = await rt.store.listRuns({
          name: d.dag.name,
          status: RunStatus.Queued,
          limit: 1,
        });
        if (waiting[0]) {
          log(
            `scheduler: DAG "${d.dag.name}" still has run ${waiting[0].dagRunId} queued; this fire adds none`,
          );
          return;
        }
        const started = await rt.runs.startLoaded(d.dag, d.localDags ?? [], {
          trigger: 'schedule',
        });
        log(
          `scheduler: run ${started.record.dagRunId} of DAG "${d.dag.name}" ${started.queued ? 'queued' : 'started'}`,
        );
      },
      stop: async (d) => {
        for (const e of await rt.runs.stopAll(d.dag.name)) log(`scheduler: ${e}`);
      },
      restart: async (d) => {
        const running = await rt.store.listRuns({
          name: d.dag.name,
          status: RunStatus.Running,
          limit: 1,
        });
        if (running[0]) await rt.runs.restart({ name: d.dag.name, dagRunId: running[0].dagRunId });
      },
      latestRun: async (name) => (await rt.store.listRuns({ name, limit: 1 }))[0],
      isRunning: async (name) =>
        (await rt.store.listRuns({ name, status: RunStatus.Running, limit: 1 })).length > 0,
    },
    log,
  });

  /** Holds the lease until `signal` aborts or another process takes it. */
  const serve = async (): Promise<void> => {
    holding = true;
    lastPass = clock.now().getTime();
    const inner = new AbortController();
    const stopInner = (): void => inner.abort();
    signal.addEventListener('abort', stopInner, { once: true });
    const renewing = (async () => {
      while (!inner.signal.aborted) {
        await clock.sleep(LEASE_EVERY_MS, inner.signal).catch(() => undefined);
        if (inner.signal.aborted) return;
        if (!(await lock.renew().catch(() => false))) {
          log('scheduler: another process took the scheduler lease; stepping down');
          inner.abort();
        }
      }
    })();
    const retention = (async () => {
      let wait = RETENTION_FIRST_MS;
      for (;;) {
        await clock.sleep(wait, inner.signal).catch(() => undefined);
        if (inner.signal.aborted) return;
        wait = RETENTION_EVERY_MS;
        try {
          const r = await applyRetentionToAll({
            store: rt.store,
            dags: rt.dags,
            defaultDays: rt.config.histRetentionDays,
          });
          if (r.totalRuns > 0 || r.orphanedLogFolders > 0)
            log(
              `scheduler: retention deleted ${r.totalRuns} run(s) past histRetentionDays and ${r.orphanedLogFolders} orphaned log folder(s)`,
            );
        } catch (e) {
          log(`scheduler: the retention pass failed: ${(e as Error).message}`);
        }
      }
    })();
    await Promise.all([
      retention,
      cron.run(inner.signal),
      runQueueProcessor(rt.runs.queues, clock, inner.signal, {
        intervalMs: QUEUE_PASS_MS,
        onTick: () => (lastPass = clock.now().getTime()),
        warn: (m) => log(`warning: ${m}`),
      }),
      renewing,
    ]);
    signal.removeEventListener('abort', stopInner);
    holding = false;
    await lock.release().catch(() => undefined);
  };

  // Stand by until the lease is free, serve, and stand by again after stepping down.
  const done = (async () => {
    let told = false;
    while (!signal.aborted) {
      const acquired = await lock.tryAcquire().catch((e: unknown) => {
        log(`scheduler: the scheduler lease cannot be read or written: ${(e as Error).message}`);
        return false;
      });
      if (acquired) {
        told = false;
        await serve();
        continue;
      }
      if (!told) {
        const h = await lock.holder();
        log(
          `scheduler: another process (pid ${h?.owner.pid ?? '?'} on ${h?.owner.host ?? '?'}) is the scheduler of this store; standing by`,
        );
        told = true;
      }
      await clock.sleep(LEASE_EVERY_MS, signal).catch(() => undefined);
    }
  })();
  return { status, done };
};
