import type { Dag, DagRunRecord } from '@trellis/spec';

/** What a dispatch job carries: everything a worker needs to execute the run (no shared disk). */
export interface RunJobData {
  readonly record: DagRunRecord;
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  /** When the coordinator put it on the queue (ISO), for dispatch latency. */
  readonly dispatchedAt: string;
}

/** BullMQ job id of a run: one job per run, so a run is never queued twice. */
export const jobIdOf = (record: Pick<DagRunRecord, 'name' | 'dagRunId' | 'root'>): string =>
  `${record.root.name}.${record.root.dagRunId}.${record.name}.${record.dagRunId}`;

/** Redis key prefix of every Trellis queue. */
export const DEFAULT_PREFIX = 'trellis';
/** Redis set of the dispatch queue names ever used (a new coordinator tells workers of them). */
export const queuesKey = (prefix: string): string => `${prefix}:dispatch-queues`;

/** BullMQ queue name of a dispatch queue (BullMQ refuses `:` in names). */
export const bullQueueName = (dispatchQueue: string): string =>
  dispatchQueue.replaceAll(':', '%3A');
