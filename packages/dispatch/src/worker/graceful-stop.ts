import type { ActiveRuns } from './active-runs.js';
import type { CoordinatorLink } from './coordinator-link.js';
import type { Outbox } from './outbox.js';
import type { QueueConsumer } from './queue-consumer.js';
import type { WorkerAgentDeps } from './worker-agent-deps.js';

/** The parts of a worker a stop winds down, in order. */
export interface StoppingWorker {
  readonly deps: Pick<WorkerAgentDeps, 'client' | 'clock' | 'log'>;
  readonly queues: Pick<QueueConsumer, 'stopTaking' | 'close'>;
  readonly link: Pick<CoordinatorLink, 'beat' | 'halt' | 'whenHalted' | 'deregister'>;
  readonly runs: ActiveRuns;
  readonly outbox: Pick<Outbox, 'drained' | 'stop' | 'unbound'>;
}

/**
 * Graceful stop (SIGTERM): takes no new runs, lets running ones finish for `graceMs`, then
 * stops them (they end cancelled), delivers what is buffered (at most `flushMs`), and closes.
 */
export const stopGracefully = async (
  w: StoppingWorker,
  graceMs: number,
  flushMs: number,
): Promise<void> => {
  await w.queues.stopTaking();
  await w.link.beat().catch(() => undefined); // tell the coordinator at once
  if (w.runs.slots > 0 || w.runs.size > 0) {
    w.deps.log(
      `stopping: letting ${w.runs.size} run(s) finish (at most ${Math.round(graceMs / 1000)} s)`,
    );
    const timer = new AbortController();
    await Promise.race([
      w.runs.whenIdle(),
      w.deps.clock.sleep(graceMs, timer.signal).catch(() => undefined),
    ]);
    timer.abort();
    w.outbox.unbound(); // a stopped run's last output must not wait for room, or it never ends
    w.runs.stopAll();
    await w.runs.whenIdle();
  }
  const flushTimer = new AbortController();
  const flushed = w.outbox.drained(flushTimer.signal);
  await Promise.race([
    flushed,
    w.deps.clock.sleep(flushMs, flushTimer.signal).catch(() => undefined),
  ]);
  flushTimer.abort();
  w.link.halt();
  await w.queues.close();
  await w.outbox.stop();
  await w.link.whenHalted();
  // Gone from GET /workers at once, not a ghost until the coordinator forgets silent workers.
  if (w.runs.size === 0) await w.link.deregister();
  w.deps.client.close();
};
