import { AsyncResource } from 'node:async_hooks';
import { RunStatus, isFinalRunStatus } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { Labels } from '../registry/selector.js';
import type { CoordinatorContext } from './coordinator-context.js';
import type { RemoteRun } from './remote-runs.js';
import { casPause } from './cas-pause.js';
import { toMsg } from './wire-refs.js';

/**
 * The runs the coordinator follows: those put on a dispatch queue (until a worker claims them),
 * those workers execute, and those a previous coordinator left running. Watches each for stop
 * requests and forwards them to its worker, or ends it while it still waits on its queue.
 */
export class RunTracker {
  readonly #ctx: CoordinatorContext;
  /**
   * Runs `fn` in the async context the tracker was made in: a stop watch (its timers, and the end
   * of a queued run it writes) must not inherit the scope of whoever dispatched the run, such as
   * the leader's queue processor, whose fenced writes fail once another instance leads.
   */
  readonly #outside = AsyncResource.bind(<T>(fn: () => T): T => fn());

  constructor(ctx: CoordinatorContext) {
    this.#ctx = ctx;
  }

  /** Follows a run: `workerId` undefined while it waits on its dispatch queue. */
  track(ref: RunRef, root: RunRef, workerId: string | undefined, selector: Labels): RemoteRun {
    const run: RemoteRun = {
      ref,
      root,
      workerId,
      selector,
      seq: 0,
      unwatch: () => undefined,
      cancelRequested: false,
      unlisted: false,
      finishing: false,
    };
    this.#ctx.runs.add(run);
    try {
      const isChild = ref.name !== root.name || ref.dagRunId !== root.dagRunId;
      run.unwatch = this.#outside(() =>
        this.#ctx.deps.store.watchStop(ref, isChild ? { root } : {}, () =>
          this.#onStopRequested(ref, root),
        ),
      );
    } catch (e) {
      this.#ctx.warn(`cannot watch stop requests of run ${ref.dagRunId}: ${(e as Error).message}`);
    }
    return run;
  }

  /** Tracks a run put on a dispatch queue (already known: left as it is). */
  expect(record: DagRunRecord, selector: Labels): void {
    const ref = { name: record.name, dagRunId: record.dagRunId };
    if (this.#ctx.runs.get(ref, record.root)) return;
    this.track(ref, record.root, undefined, selector).dispatchedAtMs = this.#ctx.deps.clock
      .now()
      .getTime();
  }

  /** Forgets a run that was put on a queue but never reached it (the enqueue failed). */
  unexpect(ref: RunRef, root: RunRef): void {
    this.#ctx.runs.remove(ref, root);
  }

  /**
   * Forwards a stop to the worker running `ref`. Returns `forwarded` (a worker has it),
   * `pending` (still on its dispatch queue: the dispatcher removes it) or `unknown`.
   */
  cancel(ref: RunRef, root: RunRef): 'forwarded' | 'pending' | 'unknown' {
    const run = this.#ctx.runs.get(ref, root);
    if (!run) return 'unknown';
    run.cancelRequested = true;
    if (run.workerId === undefined) return 'pending';
    this.#ctx.commands.push(run.workerId, { kind: 'KIND_CANCEL', run: toMsg(ref) });
    return 'forwarded';
  }

  /**
   * Ends a run that never reached a worker (dequeued or stopped while on its dispatch queue):
   * writes its final record and forgets it. False when a worker has it or it already ended.
   */
  async finishUnclaimed(
    ref: RunRef,
    status: RunStatus,
    error: string,
    root: RunRef,
  ): Promise<boolean> {
    const { deps, runs } = this.#ctx;
    const run = runs.get(ref, root);
    if (run && (run.workerId !== undefined || run.finishing)) return false;
    // Claims are refused while the record is written; the run is forgotten only once it is on
    // disk, so a failed write leaves it tracked (and its stop request in force) for a retry.
    if (run) run.finishing = true;
    try {
      // Compare and swap: a claim through another coordinator that lands first wins (its worker
      // is then told to stop, by the coordinator it uses, from the stop request in the store).
      for (let attempt = 0; ; attempt++) {
        if (attempt > 0) await casPause(deps.clock, attempt);
        const record = await deps.store.getRun(ref, { root });
        const owner = record.owner?.workerId ?? '';
        // Ended, or claimed by a worker of another coordinator sharing the queues: not ours to end.
        if (isFinalRunStatus(record.status) || (owner !== '' && owner !== 'local')) {
          if (runs.get(ref, root) === run && run?.workerId === undefined) runs.remove(ref, root);
          return false;
        }
        const read = record.revision;
        record.status = status;
        record.finishedAt = deps.clock.now().toISOString();
        record.error = error;
        record.revision += 1;
        if (!(await deps.store.saveRunIf(record, read))) continue; // changed meanwhile
        runs.remove(ref, root);
        deps.onRunUpdate?.(record);
        this.#ctx.capacity.changed();
        return true;
      }
    } finally {
      if (run) run.finishing = false;
    }
  }

  /** Runs left running on workers by a previous coordinator: tracked again, workers assumed. */
  async adopt(startedAt: Date): Promise<void> {
    const running = await this.#ctx.deps.store.listRuns({
      status: RunStatus.Running,
      includeChildren: true,
    });
    for (const s of running) {
      const w = s.owner?.workerId;
      if (w === undefined || w === 'local' || w === '') continue;
      const ref = { name: s.name, dagRunId: s.dagRunId };
      this.track(ref, s.root, w, {});
      this.#ctx.registry.assume(w, startedAt);
    }
  }

  #onStopRequested(ref: RunRef, root: RunRef): void {
    const r = this.#ctx.runs.get(ref, root);
    if (!r) return;
    if (this.cancel(ref, root) === 'pending')
      this.finishUnclaimed(
        ref,
        RunStatus.Cancelled,
        'stopped before a worker started it',
        root,
      ).catch((e: unknown) =>
        this.#ctx.warn(`stopping queued run ${ref.dagRunId}: ${(e as Error).message}`),
      );
  }
}
