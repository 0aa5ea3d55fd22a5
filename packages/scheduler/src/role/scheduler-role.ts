import type { Clock } from '@trellis/core';
import { CronScheduler, type ScheduledDag } from '../cron-scheduler.js';
import { runQueueProcessor, type QueueProcessorPort } from '../queues/queue-processor.js';
import type { LostRunsDeps } from '../recovery/lost-runs.js';
import { runRetentionLoop, type RetentionPassReport } from './retention-loop.js';
import { scheduleActions, type ScheduledRunsPort } from './schedule-actions.js';

/** How often the holder renews its lease, and a standby looks whether it is free. */
const LEASE_EVERY_MS = 5_000;
/** The queue loop's pass interval; health fails when no pass completed for this many passes. */
const QUEUE_PASS_MS = 1_000;
const STALL_PASSES = 30;

/** The scheduler lease of a store (`LeaseLock` in @trellis/store): one scheduler at a time. */
export interface SchedulerLease {
  tryAcquire(): Promise<boolean>;
  renew(): Promise<boolean>;
  release(): Promise<void>;
  holder(): Promise<
    { readonly owner: { readonly pid: number; readonly host: string } } | undefined
  >;
}

export interface SchedulerRoleDeps {
  readonly clock: Clock;
  readonly lease: SchedulerLease;
  /** Every valid DAG file with its suspension flag (cron reads them at every tick). */
  readonly dags: () => Promise<readonly ScheduledDag[]>;
  readonly runs: ScheduledRunsPort;
  readonly queues: QueueProcessorPort;
  /** Where lost runs are found and marked failed. */
  readonly lostRuns: LostRunsDeps;
  /** One retention pass over every DAG's history. */
  readonly retentionPass: () => Promise<RetentionPassReport>;
  readonly log: (line: string) => void;
}

/** The scheduler role's state, for /health and `svc_scheduler_running`. */
export interface SchedulerStatus {
  /** True while this process holds the scheduler lease and its loops run. */
  readonly running: () => boolean;
  /** False when this process is the scheduler but its loop stopped completing passes. */
  readonly alive: () => boolean;
}

/**
 * The scheduler role (`start-all`, `trellis scheduler`): the cron loop, the queue processor with
 * lost-run recovery, and the daily retention pass. Only one process per store acts as the
 * scheduler: the others stand by until the lease is free (a dead holder cannot keep it). Ends
 * when `signal` aborts.
 */
export const startSchedulerRole = (
  deps: SchedulerRoleDeps,
  signal: AbortSignal,
): { status: SchedulerStatus; done: Promise<void> } => {
  const { clock, lease, log } = deps;
  const state = { holding: false, lastPass: clock.now().getTime() };
  const status: SchedulerStatus = {
    running: () => state.holding,
    alive: () =>
      !state.holding || clock.now().getTime() - state.lastPass < QUEUE_PASS_MS * STALL_PASSES,
  };
  const cron = new CronScheduler({
    clock,
    dags: deps.dags,
    actions: scheduleActions(deps.runs, log),
    log,
  });

  /** Holds the lease until `signal` aborts or another process takes it. */
  const serve = async (): Promise<void> => {
    state.holding = true;
    state.lastPass = clock.now().getTime();
    const inner = new AbortController();
    const stopInner = (): void => inner.abort();
    signal.addEventListener('abort', stopInner, { once: true });
    // aborted while the lease was being taken: an aborted signal fires no more 'abort' event
    if (signal.aborted) inner.abort();
    await Promise.all([
      runRetentionLoop(deps.retentionPass, clock, log, inner.signal),
      cron.run(inner.signal),
      runQueueProcessor(deps.queues, deps.lostRuns, clock, inner.signal, {
        intervalMs: QUEUE_PASS_MS,
        onTick: () => (state.lastPass = clock.now().getTime()),
        warn: (m) => log(`warning: ${m}`),
      }),
      keepLease(lease, clock, log, inner),
    ]);
    signal.removeEventListener('abort', stopInner);
    state.holding = false;
    await lease.release().catch(() => undefined);
  };

  const done = standBy(lease, clock, log, signal, serve);
  return { status, done };
};

/** Renews the lease every 5 s; aborts `inner` when another process took it. */
const keepLease = async (
  lease: SchedulerLease,
  clock: Clock,
  log: (line: string) => void,
  inner: AbortController,
): Promise<void> => {
  while (!inner.signal.aborted) {
    await clock.sleep(LEASE_EVERY_MS, inner.signal).catch(() => undefined);
    if (inner.signal.aborted) return;
    if (!(await lease.renew().catch(() => false))) {
      log('scheduler: another process took the scheduler lease; stepping down');
      inner.abort();
    }
  }
};

/** Stands by until the lease is free, serves, and stands by again after stepping down. */
const standBy = async (
  lease: SchedulerLease,
  clock: Clock,
  log: (line: string) => void,
  signal: AbortSignal,
  serve: () => Promise<void>,
): Promise<void> => {
  let told = false;
  while (!signal.aborted) {
    const acquired = await lease.tryAcquire().catch((e: unknown) => {
      log(`scheduler: the scheduler lease cannot be read or written: ${(e as Error).message}`);
      return false;
    });
    if (acquired) {
      told = false;
      await serve();
      continue;
    }
    if (!told) {
      const h = await lease.holder();
      log(
        `scheduler: another process (pid ${h?.owner.pid ?? '?'} on ${h?.owner.host ?? '?'}) is the scheduler of this store; standing by`,
      );
      told = true;
    }
    await clock.sleep(LEASE_EVERY_MS, signal).catch(() => undefined);
  }
};
