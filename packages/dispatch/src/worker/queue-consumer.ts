import type { Job } from 'bullmq';
import { Worker, WaitingError } from '../bullmq-classes.js';
import { isUnavailable, type ClaimResponse } from '@trellis/coordinator/client';
import type { DagRunRecord } from '@trellis/spec';
import { DEFAULT_PREFIX, bullQueueName, type RunJobData } from '../remote/job-data.js';
import type { ActiveRuns } from './active-runs.js';
import type { WorkerAgentDeps } from './worker-agent-deps.js';

type QueueConsumerDeps = Pick<
  WorkerAgentDeps,
  'id' | 'concurrency' | 'client' | 'redis' | 'clock' | 'owner' | 'log' | 'prefix'
>;

/**
 * How long the last step of a stop waits for the consumers to close: the Redis round trips of a
 * job fetched while the worker stopped (back to its queue) and of the runs' last jobs. Only a
 * Redis that is away makes it last; the stop goes on then, with a warning.
 */
export const CLOSE_LIMIT_MS = 10_000;

/** Executes a run this worker was granted. */
type ExecuteClaimed = (data: RunJobData, claim: ClaimResponse) => Promise<void>;

/**
 * The dispatch queues a worker consumes (the ones the coordinator names): one BullMQ worker per
 * queue, at most `concurrency` runs at once across all of them (the consumers pause while the
 * slots are full), each run claimed from the coordinator before it executes (so a run never
 * executes twice).
 */
export class QueueConsumer {
  readonly #deps: QueueConsumerDeps;
  readonly #runs: ActiveRuns;
  readonly #execute: ExecuteClaimed;
  readonly #bull = new Map<string, Worker<RunJobData>>();
  #paused = false;
  #accepting = true;
  /** A graceful stop began: nothing makes the worker take runs again. */
  #stopping = false;
  /** An operator's cordon or drain, as the coordinator said. */
  #held: 'cordoned' | 'draining' | undefined;
  /** Every consumer closing (from the start of a stop): resolves once none holds a job. */
  #closed: Promise<void> | undefined;

  constructor(deps: QueueConsumerDeps, runs: ActiveRuns, execute: ExecuteClaimed) {
    this.#deps = deps;
    this.#runs = runs;
    this.#execute = execute;
  }

  /** False once the worker stops: it takes no new runs. */
  get accepting(): boolean {
    return this.#accepting;
  }

  /** Starts consuming a dispatch queue (once per queue). */
  consume(queue: string): void {
    if (this.#bull.has(queue) || this.#stopping) return;
    const w = new Worker<RunJobData>(
      bullQueueName(queue),
      (job, token) => this.#process(job, token),
      {
        connection: this.#deps.redis,
        prefix: this.#deps.prefix ?? DEFAULT_PREFIX,
        concurrency: this.#deps.concurrency,
        // A job whose worker died is not handed out again: the coordinator fails the run
        // (lost-worker rule) and a second execution is refused at claim anyway.
        maxStalledCount: 0,
      },
    );
    w.on('error', (e) => this.#deps.log(`warning: queue ${queue}: ${e.message}`));
    this.#bull.set(queue, w);
    if (this.#paused) void w.pause(true).catch(() => undefined);
    this.#deps.log(`consuming dispatch queue ${queue}`);
  }

  /** The worker's state as its heartbeats tell it. */
  get state(): 'active' | 'draining' | 'cordoned' {
    if (this.#stopping || this.#held === 'draining') return 'draining';
    return this.#held ?? 'active';
  }

  /**
   * Takes no new runs from now on (a graceful stop): every consumer starts closing at once. Not
   * a pause: a paused BullMQ worker still ends the fetch it is blocked in, so a run dispatched
   * meanwhile lands in `active` here. A closing one stops fetching, and its close resolves only
   * once such a run is back on its queue and the running ones ended, which {@link close} awaits.
   */
  stopTaking(): Promise<void> {
    this.#stopping = true;
    this.#accepting = false;
    void this.#closeAll(); // awaited by close()
    return Promise.resolve();
  }

  /** An operator's cordon or drain (no new runs), or `undefined`: take runs again. */
  hold(state: 'cordoned' | 'draining' | undefined): void {
    if (state === this.#held) return;
    this.#held = state;
    this.#accepting = state === undefined && !this.#stopping;
    this.#deps.log(
      state === undefined ? 'uncordoned: taking runs again' : `${state}: taking no new runs`,
    );
    this.#updatePause();
  }

  /**
   * The last step of a stop (once no run executes): waits until every consumer closed, so no job
   * is left `active` by a worker that exits; at most {@link CLOSE_LIMIT_MS}.
   */
  async close(): Promise<void> {
    const closed = this.#closeAll().then(() => true);
    const timer = new AbortController();
    const limit = this.#deps.clock.sleep(CLOSE_LIMIT_MS, timer.signal).then(
      () => false,
      () => true,
    );
    const inTime = await Promise.race([closed, limit]);
    timer.abort();
    if (!inTime)
      this.#deps.log(
        `warning: the dispatch queues did not close within ${CLOSE_LIMIT_MS / 1000} s (is Redis reachable?): a run fetched while this worker stopped may stay taken and fail at the activation limit`,
      );
  }

  /** Closes every consumer once, gracefully: their fetches and jobs end first. */
  #closeAll(): Promise<void> {
    this.#closed ??= Promise.all(
      [...this.#bull.values()].map((w) => w.close().catch(() => undefined)),
    ).then(() => undefined);
    return this.#closed;
  }

  async #process(job: Job<RunJobData>, token: string | undefined): Promise<void> {
    if (!this.#accepting || this.#runs.slots >= this.#deps.concurrency) {
      // Fetched by a second queue's consumer while the slots were full: back to its queue.
      await job.moveToWait(token);
      throw new WaitingError();
    }
    this.#runs.takeSlot();
    this.#updatePause();
    try {
      const claim = await this.#claim(job.data.record);
      if (claim === undefined) {
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (!claim.granted && claim.requeue === true) {
        // Cordoned or drained meanwhile: back to its queue, for another worker.
        this.hold(this.#held ?? 'cordoned');
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (!claim.granted) {
        this.#deps.log(`skipping run ${job.data.record.dagRunId}: ${claim.reason}`);
        return;
      }
      await this.#execute(job.data, claim);
    } finally {
      this.#runs.releaseSlot();
      this.#updatePause();
      this.#runs.notifyIdle();
    }
  }

  /** Claims a run; waits out a coordinator outage. Undefined when the worker stops meanwhile. */
  async #claim(record: DagRunRecord): Promise<ClaimResponse | undefined> {
    let wait = 100;
    while (this.#accepting) {
      try {
        return await this.#deps.client.claim({
          workerId: this.#deps.id,
          run: { name: record.name, dagRunId: record.dagRunId },
          root: { name: record.root.name, dagRunId: record.root.dagRunId },
          host: this.#deps.owner.host,
          pid: this.#deps.owner.pid,
          processStart: this.#deps.owner.processStart,
        });
      } catch (e) {
        if (!isUnavailable(e)) {
          // not retried: said, so a run whose claim went wrong can be traced on this worker
          this.#deps.log(`claiming run ${record.dagRunId} failed: ${(e as Error).message}`);
          throw e;
        }
        await this.#deps.clock.sleep(wait).catch(() => undefined);
        wait = Math.min(wait * 2, 2_000);
      }
    }
    return undefined;
  }

  #updatePause(): void {
    const full = !this.#accepting || this.#runs.slots >= this.#deps.concurrency;
    if (full === this.#paused) return;
    this.#paused = full;
    for (const w of this.#bull.values()) {
      if (full) void w.pause(true).catch(() => undefined);
      else if (this.#accepting) void w.resume();
    }
  }
}
