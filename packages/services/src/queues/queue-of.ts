import type { Dag } from '@trellis/spec';

/** A custom queue declared in config.yaml (`queues: [{name, maxConcurrency}]`). */
export interface CustomQueue {
  readonly name: string;
  readonly maxConcurrency: number;
}

/** The queue a run goes through and how many of its runs may be active at once. */
export interface QueueInfo {
  readonly name: string;
  /** `custom` for a queue declared in config.yaml, `dag-based` for the DAG's own queue. */
  readonly type: 'custom' | 'dag-based';
  /** Active runs allowed at once; `Infinity` for a DAG with `maxActiveRuns: -1`. */
  readonly capacity: number;
}

/** Capacity of a DAG's own queue: its maxActiveRuns, -1 = no limit. */
const dagCapacity = (dag: Dag): number =>
  dag.maxActiveRuns === -1 ? Infinity : Math.max(1, dag.maxActiveRuns);

/**
 * The queue of a run (spec: Queue; docs/architecture.md, "The path of a run"): the enqueue override, else the
 * DAG's `queue`, else the DAG's own (dag-based) queue. A queue declared in config.yaml has its
 * `maxConcurrency`; a `queue:` name config.yaml does not declare, and the DAG's own queue, hold
 * the DAG's `maxActiveRuns` (docs/decisions.md).
 */
export const queueOf = (
  dag: Dag,
  custom: ReadonlyMap<string, CustomQueue>,
  override?: string,
): QueueInfo => {
  const name = override !== undefined && override !== '' ? override : (dag.queue ?? dag.name);
  const declared = custom.get(name);
  if (declared) return { name, type: 'custom', capacity: declared.maxConcurrency };
  return { name, type: 'dag-based', capacity: dagCapacity(dag) };
};
