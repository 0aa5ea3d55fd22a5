import { NodeStatus, RunStatus, isFinalRunStatus } from '@trellis/core';
import type { DagRunRecord, NodeRecord } from '@trellis/spec';
import { UNHEALTHY_MS } from '../registry/worker-health.js';
import { FORGET_AFTER_MS } from '../registry/worker-registry.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { runKey, type RemoteRun } from './remote-runs.js';
import { toMsg } from './wire-refs.js';

/**
 * The lost-worker rule: the runs of a worker silent for over the threshold (15 s) are marked
 * failed with an error naming the worker, and a worker that comes back is told to drop them.
 * A sweep looks for such workers every `sweepEveryMs`.
 */
export class LostWorkers {
  readonly #ctx: CoordinatorContext;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  /** Workers reported lost, with the heartbeat they were lost after (one report per loss). */
  readonly #reported = new Map<string, number>();

  constructor(ctx: CoordinatorContext) {
    this.#ctx = ctx;
  }

  /** Starts the periodic sweep. */
  start(): void {
    this.#loop = this.#sweepLoop();
  }

  /** Stops the periodic sweep; resolves once a sweep under way is done. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /**
   * Each run of a worker silent for longer than the threshold is marked failed with an error
   * naming the worker; its slot frees at once. Workers silent for long are forgotten.
   */
  async sweep(): Promise<void> {
    const now = this.#ctx.deps.clock.now();
    const lostAfter = this.#ctx.deps.lostAfterMs ?? UNHEALTHY_MS;
    for (const w of this.#ctx.registry.silentFor(lostAfter, now)) {
      if (this.#reported.get(w.id) !== w.lastHeartbeat.getTime()) {
        this.#reported.set(w.id, w.lastHeartbeat.getTime());
        this.#ctx.deps.onWorkerChange?.({ kind: 'lost', workerId: w.id, labels: { ...w.labels } });
      }
      for (const run of this.#ctx.runs.ofWorker(w.id)) {
        await this.#failLost(run, w.id, w.lastHeartbeat, now);
      }
      if (now.getTime() - w.lastHeartbeat.getTime() > FORGET_AFTER_MS) {
        this.#ctx.registry.forget(w.id);
        this.#reported.delete(w.id);
      }
    }
  }

  async #sweepLoop(): Promise<void> {
    const every = this.#ctx.deps.sweepEveryMs ?? 1_000;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        await this.#ctx.deps.clock.sleep(every, signal);
      } catch {
        return;
      }
      await this.sweep().catch((e: unknown) =>
        this.#ctx.warn(`lost-worker sweep failed: ${(e as Error).message}`),
      );
    }
  }

  async #failLost(run: RemoteRun, workerId: string, last: Date, now: Date): Promise<void> {
    const { deps } = this.#ctx;
    this.#ctx.dropped.add(workerId, runKey(run.ref, run.root));
    this.#ctx.runs.remove(run.ref, run.root);
    let record: DagRunRecord;
    try {
      record = await deps.store.getRun(run.ref, { root: run.root });
    } catch (e) {
      this.#ctx.warn(`lost run ${run.ref.dagRunId}: ${(e as Error).message}`);
      return;
    }
    if (isFinalRunStatus(record.status)) return;
    const error = `worker "${workerId}" was lost: no heartbeat since ${last.toISOString()} (over ${Math.round((deps.lostAfterMs ?? UNHEALTHY_MS) / 1000)} s)`;
    failRun(record, error, now.toISOString());
    await deps.store.saveRun(record);
    this.#ctx.commands.push(workerId, { kind: 'KIND_DROP', run: toMsg(run.ref) });
    deps.onRunUpdate?.(record);
    this.#ctx.capacity.changed();
  }
}

/** Marks the run and its running nodes (handlers included) failed with `error` at `iso`. */
const failRun = (record: DagRunRecord, error: string, iso: string): void => {
  const failNode = (n: NodeRecord | undefined): void => {
    if (!n) return;
    if (n.status === NodeStatus.Running) {
      n.status = NodeStatus.Failed;
      n.finishedAt = iso;
      n.error = error;
    }
  };
  for (const n of record.nodes) failNode(n);
  failNode(record.onExit);
  failNode(record.onSuccess);
  failNode(record.onFailure);
  failNode(record.onCancel);
  record.status = RunStatus.Failed;
  record.error = error;
  record.finishedAt = iso;
  record.revision += 1_000; // above anything the lost worker may still send
};
