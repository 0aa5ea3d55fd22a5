import type { Clock } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { recoverLostRuns, type LostRunsDeps } from '../recovery/lost-runs.js';

/** What the queue processor drives (the services' run service and its admission). */
export interface QueueProcessorPort {
  /** One admission pass: activation limits, runs queued elsewhere, runs others execute. */
  reconcile(): Promise<void>;
  /** Runs that ended outside their process (lost-run recovery): their slots are freed. */
  runsEnded(records: readonly DagRunRecord[]): void;
  /** Leaves the queues to the next queue process (queued runs stay queued). */
  releaseQueues(): void;
}

export interface QueueProcessorOptions {
  /** @default 1000 */
  readonly intervalMs?: number;
  /** @default 10000 */
  readonly zombieEveryMs?: number;
  /** Reports each completed pass (health). */
  readonly onTick?: () => void;
  readonly warn?: (message: string) => void;
}

/**
 * The queue processor of the scheduler role: reconciles admission every `intervalMs` and detects
 * lost runs (owner gone) every `zombieEveryMs`, until `signal` aborts. A failing pass is reported
 * and the next one runs as usual.
 */
export const runQueueProcessor = async (
  queues: QueueProcessorPort,
  lostRuns: LostRunsDeps,
  clock: Clock,
  signal: AbortSignal,
  opts: QueueProcessorOptions = {},
): Promise<void> => {
  const interval = opts.intervalMs ?? 1000;
  const zombieEvery = opts.zombieEveryMs ?? 10_000;
  let lastZombieCheck = -Infinity;
  while (!signal.aborted) {
    try {
      const now = clock.now().getTime();
      if (now - lastZombieCheck >= zombieEvery) {
        lastZombieCheck = now;
        queues.runsEnded(await recoverLostRuns(lostRuns));
      }
      await queues.reconcile();
      opts.onTick?.();
    } catch (e) {
      opts.warn?.(`queue pass failed: ${(e as Error).message}`);
    }
    await clock.sleep(interval, signal).catch(() => undefined);
  }
  // Shutting down (or stepping down): queued runs stay queued for the next queue process.
  queues.releaseQueues();
};
