import type { Dag, DagRunRecord } from '@trellis/spec';

/** One run of a DAG, as the caller created its record. */
export interface RunDagInput {
  readonly dag: Dag;
  /** The other DAGs of the DAG's file (`run:` targets looked up first). */
  readonly localDags?: readonly Dag[];
  /**
   * The record as created by the caller: ids, root/parent, final (unexpanded) params and log
   * path. Nodes already in a final status (a retried run's succeeded steps) are kept as they are.
   */
  readonly record: DagRunRecord;
  /** Aborting it stops the run: running steps get their stop signal; the run ends cancelled. */
  readonly stop?: AbortSignal;
  /** Everything but executing commands: each step succeeds and logs what it would run. */
  readonly dryRun?: boolean;
  /** Called once the run is durably "running" (its first save completed), before any step. */
  readonly onStarted?: (record: DagRunRecord) => void;
}
