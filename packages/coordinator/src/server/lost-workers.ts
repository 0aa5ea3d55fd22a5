import { UNHEALTHY_MS } from '../registry/worker-health.js';
import { FORGET_AFTER_MS } from '../registry/worker-registry.js';
import type { SharedFleet } from '../fleet/shared-fleet.js';
import type { WorkerEntry } from '../registry/worker-registry.js';
import { forgetWorker, type CoordinatorContext } from './coordinator-context.js';
import { loseRun } from './run-loss.js';

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
  /** The workers other coordinators hear (undefined: this coordinator shares no view). */
  fleet: SharedFleet | undefined;

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
      // Lost only when no coordinator heard it within the threshold.
      const elsewhere = this.fleet?.heardAfter(w.id, now.getTime() - lostAfter);
      if (elsewhere !== undefined) {
        this.#handOver(w, elsewhere.advertise);
        continue;
      }
      if (this.#reported.get(w.id) !== w.lastHeartbeat.getTime()) {
        this.#reported.set(w.id, w.lastHeartbeat.getTime());
        this.#ctx.deps.onWorkerChange?.({ kind: 'lost', workerId: w.id, labels: { ...w.labels } });
      }
      const error = `worker "${w.id}" was lost: no heartbeat since ${w.lastHeartbeat.toISOString()} (over ${Math.round(lostAfter / 1000)} s)`;
      for (const run of this.#ctx.runs.ofWorker(w.id))
        await loseRun(this.#ctx, run, w.id, error).catch((e: unknown) =>
          this.#ctx.warn(
            `lost run ${run.ref.dagRunId}: ${(e as Error).message}; tried again at the next sweep`,
          ),
        );
      // A worker is forgotten only once none of its runs is left to mark.
      if (
        now.getTime() - w.lastHeartbeat.getTime() > FORGET_AFTER_MS &&
        this.#ctx.runs.ofWorker(w.id).length === 0
      ) {
        forgetWorker(this.#ctx, w.id);
        this.#reported.delete(w.id);
      }
    }
  }

  /**
   * A worker that moved to another coordinator: its runs are followed there (that coordinator
   * adopts those its heartbeats list), so this one forgets them and the worker, failing nothing.
   */
  #handOver(w: WorkerEntry, advertise: string): void {
    const runs = this.#ctx.runs.ofWorker(w.id);
    for (const run of runs) this.#ctx.runs.remove(run.ref, run.root);
    forgetWorker(this.#ctx, w.id);
    this.#reported.delete(w.id);
    if (!w.assumed || runs.length > 0)
      this.#ctx.warn(
        `worker "${w.id}" is heard by the coordinator at ${advertise}, not here: ${runs.length} run(s) of it are followed there`,
      );
    if (runs.length > 0) this.#ctx.capacity.changed();
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
}
