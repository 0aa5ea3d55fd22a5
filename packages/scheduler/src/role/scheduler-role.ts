import type { Clock } from '@trellis/core';
import { CronScheduler, type Kind, type ScheduledDag } from '../cron-scheduler.js';
import { runQueueProcessor, type QueueProcessorPort } from '../queues/queue-processor.js';
import type { LostRunsDeps } from '../recovery/lost-runs.js';
import { resumeCron, type FireLedger } from './fire-ledger.js';
import { keepLease, type SchedulerLease } from './lease-keeper.js';
import { runRetentionLoop, type RetentionPassReport } from './retention-loop.js';
import { scheduleActions, type ScheduledRunsPort } from './schedule-actions.js';

/** How often the holder renews its lease, and a standby looks whether it is free. */
const LEASE_EVERY_MS = 5_000;
/** The queue loop's pass interval; health fails when no pass completed for this many passes. */
const QUEUE_PASS_MS = 1_000;
const STALL_PASSES = 30;

export type { SchedulerLease } from './lease-keeper.js';

export interface SchedulerRoleDeps {
  readonly clock: Clock;
  readonly lease: SchedulerLease;
  /** How often the holder renews the lease and a standby tries it. @default 5000 */
  readonly leaseEveryMs?: number;
  /**
   * The lease's time to live, when the lease expires on a clock this process cannot see (the
   * database's): the leader then steps down on its own before its lease can expire, when it
   * could not renew it (lease-keeper.ts). Absent: it steps down when a renewal fails.
   */
  readonly leaseTtlMs?: number;
  /** The fire ledger of a shared store (replicated coordinators); absent with the file store. */
  readonly fires?: FireLedger;
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
  /**
   * True while this process holds the scheduler lease: from taking it until it steps down (lost,
   * not renewed in time, or shutting down), not until its loops have ended after that: a pass
   * still finishing its store calls is not a second leader (/health's `role`).
   */
  readonly running: () => boolean;
  /**
   * False when this process is the scheduler, or stepped down and its loops are still ending,
   * but its queue loop stopped completing passes.
   */
  readonly alive: () => boolean;
  /** Milliseconds since the lease was last taken or renewed, while held; else undefined. */
  readonly leaseAgeMs: () => number | undefined;
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
  // ending: stepped down, its loops not yet ended (a pass that never ends still fails /health)
  const state = { holding: false, ending: false, lastPass: clock.now().getTime(), renewedAt: 0 };
  const status: SchedulerStatus = {
    running: () => state.holding,
    alive: () =>
      !(state.holding || state.ending) ||
      clock.now().getTime() - state.lastPass < QUEUE_PASS_MS * STALL_PASSES,
    leaseAgeMs: () => (state.holding ? clock.now().getTime() - state.renewedAt : undefined),
  };
  const renewed = (): void => void (state.renewedAt = clock.now().getTime());
  const everyMs = deps.leaseEveryMs ?? LEASE_EVERY_MS;
  const fires = deps.fires;
  const cron = new CronScheduler({
    clock,
    dags: deps.dags,
    actions: scheduleActions(deps.runs, log),
    log,
    ...(fires ? { claim: (dag: string, kind: Kind, at: Date) => fires.claim(dag, kind, at) } : {}),
  });

  /** Holds the lease until `signal` aborts or another process takes it. */
  const serve = async (heldFrom: number): Promise<void> => {
    state.holding = true;
    state.ending = true;
    state.lastPass = clock.now().getTime();
    renewed();
    const inner = new AbortController();
    inner.signal.addEventListener('abort', () => void (state.holding = false), { once: true });
    const stopInner = (): void => inner.abort();
    signal.addEventListener('abort', stopInner, { once: true });
    // aborted while the lease was being taken: an aborted signal fires no more 'abort' event
    if (signal.aborted) inner.abort();
    await Promise.all([
      runRetentionLoop(deps.retentionPass, clock, log, inner.signal),
      // the lease is kept meanwhile: a resume that keeps failing ends with the lead
      (async () => {
        if (fires) await resumeCron(cron, fires, clock, log, inner.signal);
        await cron.run(inner.signal);
      })(),
      runQueueProcessor(deps.queues, deps.lostRuns, clock, inner.signal, {
        intervalMs: QUEUE_PASS_MS,
        onTick: () => (state.lastPass = clock.now().getTime()),
        warn: (m) => log(`warning: ${m}`),
      }),
      keepLease(
        lease,
        { everyMs, ...(deps.leaseTtlMs !== undefined ? { ttlMs: deps.leaseTtlMs } : {}) },
        clock,
        log,
        inner,
        heldFrom,
        renewed,
      ),
    ]);
    signal.removeEventListener('abort', stopInner);
    state.holding = false;
    state.ending = false;
    await lease.release().catch(() => undefined);
  };

  const done = standBy(lease, everyMs, clock, log, signal, serve);
  return { status, done };
};

/** Stands by until the lease is free, serves, and stands by again after stepping down. */
const standBy = async (
  lease: SchedulerLease,
  everyMs: number,
  clock: Clock,
  log: (line: string) => void,
  signal: AbortSignal,
  serve: (heldFrom: number) => Promise<void>,
): Promise<void> => {
  let told = false;
  while (!signal.aborted) {
    const tried = clock.now().getTime();
    const acquired = await lease.tryAcquire().catch((e: unknown) => {
      log(`scheduler: the scheduler lease cannot be read or written: ${(e as Error).message}`);
      return false;
    });
    if (acquired) {
      told = false;
      await serve(tried);
      continue;
    }
    if (!told) {
      const h = await lease.holder();
      log(
        `scheduler: another process (pid ${h?.owner.pid ?? '?'} on ${h?.owner.host ?? '?'}) is the scheduler of this store; standing by`,
      );
      told = true;
    }
    await clock.sleep(everyMs, signal).catch(() => undefined);
  }
};
