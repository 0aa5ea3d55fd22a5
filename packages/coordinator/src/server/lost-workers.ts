import { UNHEALTHY_MS } from '../registry/worker-health.js';
import { FORGET_AFTER_MS } from '../registry/worker-registry.js';
import type { CoordinatorContext } from './coordinator-context.js';
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
}
