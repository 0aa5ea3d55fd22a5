import type { RunStatus } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';

/** Where a child run is stored: under its root run. */
export interface RootScope {
  readonly root?: RunRef | undefined;
}

/**
 * What the coordinator needs from the run store (the file store implements it): the coordinator
 * is the single writer of records and logs of runs executed on workers.
 */
export interface CoordinatorStore {
  getRun(ref: RunRef, opts?: RootScope): Promise<DagRunRecord>;
  saveRun(record: DagRunRecord): Promise<void>;
  /**
   * Saves the record only if the stored revision is still `expectRevision` (compare and swap);
   * false, nothing written, when another write landed first. Claims and ends of runs no worker
   * has yet use it, so a stop and a claim made at once through two coordinators never both land.
   */
  saveRunIf(record: DagRunRecord, expectRevision: number): Promise<boolean>;
  /** Creates a child run reported by a worker, with its DAG snapshot. */
  createRun(
    record: DagRunRecord,
    snapshot: { readonly dag: unknown; readonly localDags: readonly unknown[] },
  ): Promise<void>;
  /** Summaries (with `owner`) of runs in a status, children included. */
  listRuns(filter: {
    readonly status?: RunStatus;
    readonly includeChildren?: boolean;
  }): Promise<readonly Pick<DagRunRecord, 'name' | 'dagRunId' | 'root' | 'owner' | 'status'>[]>;
  /** Calls `onStop` once a stop is requested for the run; returns a disposer. */
  watchStop(ref: RunRef, opts: RootScope, onStop: () => void): () => void;
}
