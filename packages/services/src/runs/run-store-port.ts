import type { RunStatus } from '@trellis/core';
import type { RunRecorder } from '@trellis/engine';
import type { DagRunRecord, RunOwner, RunRef } from '@trellis/spec';

/** What a run's `dag.json` keeps: the DAG and the other DAGs of its file, as data. */
export interface RunSnapshotData {
  readonly dag: unknown;
  readonly localDags: readonly unknown[];
}

/** Where a child run is stored: under its root run. */
export interface StoreScope {
  readonly root?: RunRef | undefined;
}

/** The run store as the services use it (`FsRunStore` in @trellis/store implements it). */
export interface RunStorePort {
  createRun(record: DagRunRecord, snapshot: RunSnapshotData): Promise<void>;
  saveRun(record: DagRunRecord): Promise<void>;
  /**
   * Saves the record only if the stored one still has revision `expectRevision` (compare and
   * swap, also against other processes); false when it changed meanwhile (nothing written).
   */
  saveRunIf(record: DagRunRecord, expectRevision: number): Promise<boolean>;
  /** Throws AppError not_found when the run does not exist. */
  getRun(ref: RunRef, scope?: StoreScope): Promise<DagRunRecord>;
  /** Throws AppError not_found when the run or its snapshot does not exist. */
  getSnapshot(ref: RunRef, scope?: StoreScope): Promise<RunSnapshotData>;
  /** Throws AppError not_found when the DAG never ran. */
  latestRun(dagName: string): Promise<DagRunRecord>;
  recorderFor(record: DagRunRecord): RunRecorder;
  /** Where a run's log goes (the record's `log`); under the DAG's own `logDir` when it sets one. */
  runLogPath(ref: RunRef, dagLogDir?: string): string;
  requestStop(ref: RunRef, scope?: StoreScope): Promise<void>;
  watchStop(ref: RunRef, scope: StoreScope, onStop: () => void): () => void;
  findOrphanedRuns(): Promise<DagRunRecord[]>;
  /** Run summaries newest first (the store's index; never reads records). */
  listRuns(filter: { name?: string; status?: RunStatus; limit?: number }): Promise<
    {
      dagRunId: string;
      name: string;
      status: RunStatus;
      queue: string;
      queuedAt: string;
      createdAt: string;
      owner?: RunOwner | undefined;
    }[]
  >;
  /** Deletes finished runs of the DAG older than `days`, with their logs and children. */
  deleteRunsOlderThan(dagName: string, days: number): Promise<number>;
}

/** Liveness of processes, for crash recovery. */
export interface ProcessProbe {
  /** The current process as a run owner. */
  readonly owner: RunOwner;
  /** True when the owner process still runs (same host, pid and start time). */
  isOwnerAlive(owner: RunOwner): boolean;
  /** Start time of a process, or undefined when it does not run. */
  processStartTime(pid: number): string | undefined;
}
