import { AppError, ErrorCode, isFinalRunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import type { RunningTask } from '../registry/worker-registry.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { runKey, type RemoteRun } from './remote-runs.js';
import { loseRun } from './run-loss.js';
import type { RunTracker } from './run-tracker.js';
import { refsOf, taskKey } from './task-refs.js';
import { toMsg } from './wire-refs.js';

/**
 * Each heartbeat's running tasks against the runs the coordinator tracks for that worker
 * (docs/decisions.md, "Distributed mode"):
 * - a run tracked as the worker's that a heartbeat does not list, from a new incarnation of the
 *   worker (it restarted: nothing it buffered survived), is taken from it as the lost-worker rule
 *   does (failed with an error naming the worker unless its record already ended). From the same
 *   incarnation, the next heartbeat without it forgets it if its record ended; otherwise it stays
 *   tracked, with a warning, since its final report may still be on its way from the worker's
 *   outbox (failing it would throw that result away).
 * - a run the worker lists that the coordinator does not track is adopted when its stored
 *   record is running and names that worker as owner; otherwise (ended, another worker's, or
 *   unknown) the worker is told to drop it. A child run not stored yet is left to its first
 *   report, which creates it.
 * The store work runs after the heartbeat's reply, one worker's at a time in heartbeat order.
 */
export class HeartbeatReconcile {
  readonly #ctx: CoordinatorContext;
  readonly #tracker: RunTracker;
  /** The store work of each worker's heartbeats, chained in order. */
  readonly #work = new Map<string, Promise<void>>();

  constructor(ctx: CoordinatorContext, tracker: RunTracker) {
    this.#ctx = ctx;
    this.#tracker = tracker;
  }

  /** A heartbeat of `workerId` (its `incarnation`) listing `tasks`, recorded in the registry. */
  onHeartbeat(workerId: string, incarnation: string, tasks: readonly RunningTask[]): void {
    const listed = new Set(tasks.map(taskKey));
    const restarted: RemoteRun[] = [];
    const unlisted: RemoteRun[] = [];
    for (const run of this.#ctx.runs.ofWorker(workerId)) {
      if (listed.has(runKey(run.ref, run.root))) {
        run.unlisted = false;
        run.warnedUnlisted = false;
        run.incarnation = incarnation;
      } else if (run.incarnation !== undefined && run.incarnation !== incarnation)
        restarted.push(run);
      else if (run.unlisted) unlisted.push(run);
      else run.unlisted = true;
    }
    const unknown = tasks.filter((t) => {
      const { ref, root } = refsOf(t);
      return (
        this.#ctx.runs.get(ref, root) === undefined &&
        !this.#ctx.dropped.has(workerId, runKey(ref, root))
      );
    });
    if (restarted.length + unlisted.length + unknown.length === 0) return;
    this.#chain(workerId, async () => {
      for (const run of restarted) await this.#lose(workerId, run);
      for (const run of unlisted) await this.#forgetEnded(workerId, run);
      for (const t of unknown) await this.#adoptOrDrop(workerId, t);
    });
  }

  /** Resolves once the store work of every heartbeat so far is done. */
  async settled(): Promise<void> {
    while (this.#work.size > 0) await Promise.all([...this.#work.values()]);
  }

  #chain(workerId: string, job: () => Promise<void>): void {
    const next = (this.#work.get(workerId) ?? Promise.resolve())
      .then(job)
      .catch((e: unknown) =>
        this.#ctx.warn(
          `reconciling the heartbeat of worker "${workerId}": ${(e as Error).message}; tried again at its next heartbeat`,
        ),
      )
      .finally(() => {
        if (this.#work.get(workerId) === next) this.#work.delete(workerId);
      });
    this.#work.set(workerId, next);
  }

  async #lose(workerId: string, run: RemoteRun): Promise<void> {
    if (this.#ctx.runs.get(run.ref, run.root) !== run) return; // ended meanwhile
    await loseRun(
      this.#ctx,
      run,
      workerId,
      `worker "${workerId}" restarted and no longer runs it (its heartbeats do not list it)`,
    );
  }

  /** A run two heartbeats left out: forgotten when its record ended, else waited for (warned). */
  async #forgetEnded(workerId: string, run: RemoteRun): Promise<void> {
    if (this.#ctx.runs.get(run.ref, run.root) !== run || !run.unlisted) return;
    const stored = await this.#ctx.deps.store
      .getRun(run.ref, { root: run.root })
      .catch(() => undefined);
    if (stored !== undefined && isFinalRunStatus(stored.status)) {
      this.#ctx.runs.remove(run.ref, run.root);
      this.#ctx.capacity.changed();
      return;
    }
    if (run.warnedUnlisted) return;
    run.warnedUnlisted = true;
    this.#ctx.warn(
      `worker "${workerId}" no longer lists run ${run.ref.dagRunId} of DAG "${run.ref.name}": waiting for its final report (or the lost-worker rule)`,
    );
  }

  async #adoptOrDrop(workerId: string, t: RunningTask): Promise<void> {
    const { ref, root } = refsOf(t);
    // only a run the store does not have is unknown; the store away decides nothing (the next
    // heartbeat asks again), or a pool time-out would drop a run the worker rightly runs
    let stored: DagRunRecord | undefined;
    try {
      stored = await this.#ctx.deps.store.getRun(ref, { root });
    } catch (e) {
      if (!AppError.is(e) || e.code !== ErrorCode.NotFound) return;
    }
    if (this.#ctx.runs.get(ref, root) !== undefined) return; // claimed or reported meanwhile
    if (stored === undefined && t.parentDagRunId !== '') return; // its first report creates it
    if (stored !== undefined && isWorkersRunning(stored, workerId)) {
      this.#tracker.track(ref, root, workerId, {});
      return;
    }
    const why =
      stored === undefined
        ? 'it is unknown'
        : isFinalRunStatus(stored.status)
          ? 'it already ended'
          : `it is not this worker's`;
    // its own run that ended: its final report is on its way (the coordinator that stored it may
    // have failed before answering), nothing to warn about
    if (
      stored === undefined ||
      !isFinalRunStatus(stored.status) ||
      stored.owner?.workerId !== workerId
    )
      this.#ctx.warn(
        `worker "${workerId}" runs run ${ref.dagRunId} of DAG "${ref.name}", but ${why}: told to drop it`,
      );
    this.#ctx.dropped.add(workerId, runKey(ref, root));
    this.#ctx.commands.push(workerId, { kind: 'KIND_DROP', run: toMsg(ref) });
  }
}

/** The stored record says the run goes on, on this worker. */
const isWorkersRunning = (record: DagRunRecord, workerId: string): boolean =>
  !isFinalRunStatus(record.status) && record.owner?.workerId === workerId;
