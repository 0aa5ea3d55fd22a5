import { Queue } from '../bullmq-classes.js';
import type { Redis } from 'ioredis';
import { RunStatus, type Clock } from '@trellis/core';
import { canonicalSelector, type Coordinator } from '@trellis/coordinator';
import type { RunActivation, RunDispatcher } from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { DEFAULT_PREFIX, bullQueueName, jobIdOf, queuesKey, type RunJobData } from './job-data.js';

export interface BullmqDispatcherDeps {
  readonly redis: Redis;
  readonly coordinator: Coordinator;
  readonly clock: Clock;
  /** Redis key prefix. @default `trellis` */
  readonly prefix?: string;
}

/**
 * The remote implementation of the services' `RunDispatcher` (docs/architecture.md, "The path of a run"): a run
 * goes on the BullMQ queue named after the canonical form of its selector (its DAG's
 * `workerSelector`, or the one a child run's step gives; `any` for none); the coordinator's registry answers whether a matching worker has a free slot.
 */
export class BullmqDispatcher implements RunDispatcher {
  readonly #deps: BullmqDispatcherDeps;
  readonly #queues = new Map<string, Queue<RunJobData>>();
  readonly #prefix: string;
  /** Queue names already recorded in Redis by this dispatcher. */
  readonly #known = new Set<string>();
  readonly #updates = new Set<(record: DagRunRecord) => void>();

  constructor(deps: BullmqDispatcherDeps) {
    this.#deps = deps;
    this.#prefix = deps.prefix ?? DEFAULT_PREFIX;
  }

  /** Tells the coordinator the queues used before (workers go on consuming them). */
  async start(): Promise<void> {
    const names = await this.#deps.redis.smembers(queuesKey(this.#prefix));
    for (const n of names) this.#deps.coordinator.addQueue(n);
  }

  availability(selector: Readonly<Record<string, string>>): string | null {
    return this.#deps.coordinator.availability(selector);
  }

  async dispatch(activation: RunActivation): Promise<void> {
    const { record, dag, localDags } = activation;
    const selector = activation.selector ?? dag.workerSelector;
    const name = canonicalSelector(selector);
    this.#deps.coordinator.expect(record, selector);
    try {
      if (!this.#known.has(name)) {
        await this.#deps.redis.sadd(queuesKey(this.#prefix), name);
        this.#known.add(name);
      }
      const data: RunJobData = {
        record,
        dag,
        localDags,
        dispatchedAt: this.#deps.clock.now().toISOString(),
      };
      await this.#queue(name).add('run', data, {
        jobId: jobIdOf(record),
        removeOnComplete: true,
        removeOnFail: { count: 1000 },
      });
    } catch (e) {
      this.#deps.coordinator.unexpect(record, record.root);
      throw e;
    }
  }

  /**
   * Stops a run: forwarded to its worker, or, while it still waits on its queue, taken off it
   * and ended cancelled.
   */
  async cancel(ref: RunRef, root: RunRef = ref): Promise<void> {
    const where = this.#deps.coordinator.cancel(ref, root);
    if (where !== 'pending') return;
    const jobId = jobIdOf({ ...ref, root });
    for (const q of this.#queues.values()) {
      const job = await q.getJob(jobId);
      if (job) await job.remove().catch(() => undefined); // taken meanwhile: the claim is refused
    }
    await this.#deps.coordinator.finishUnclaimed(
      ref,
      RunStatus.Cancelled,
      'stopped before a worker started it',
      root,
    );
  }

  onCapacity(listener: () => void): () => void {
    return this.#deps.coordinator.onCapacity(listener);
  }

  onRunUpdate(listener: (record: DagRunRecord) => void): () => void {
    this.#updates.add(listener);
    return () => this.#updates.delete(listener);
  }

  /**
   * A remote run's record changed: the coordinator (the single writer of workers' reports) calls
   * this for every record it writes; the listeners of {@link onRunUpdate} hear it.
   */
  reportRunUpdate(record: DagRunRecord): void {
    for (const l of [...this.#updates]) l(record);
  }

  /** Jobs waiting per dispatch queue (metrics: per-queue depth). */
  async depths(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    // Commands wait for a reconnect while Redis is away: a scrape must not hang on them.
    if (this.#deps.redis.status !== 'ready') return out;
    const names = await this.#deps.redis.smembers(queuesKey(this.#prefix));
    for (const n of names) out[n] = await this.#queue(n).getWaitingCount();
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close()));
    this.#queues.clear();
  }

  #queue(name: string): Queue<RunJobData> {
    let q = this.#queues.get(name);
    if (!q) {
      q = new Queue<RunJobData>(bullQueueName(name), {
        connection: this.#deps.redis,
        prefix: this.#prefix,
      });
      this.#queues.set(name, q);
    }
    return q;
  }
}
