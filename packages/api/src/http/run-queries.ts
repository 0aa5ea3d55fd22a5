import type { RunStatus } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';

/** The run summary fields the list endpoints need (no nodes). */
export type RunSummaryRecord = Omit<
  DagRunRecord,
  'nodes' | 'onExit' | 'onSuccess' | 'onFailure' | 'onCancel' | 'preconditions'
>;

/** A log chunk (spec: Log chunk). */
export interface LogChunkData {
  readonly content: string;
  readonly lineCount: number;
  readonly totalLines: number;
  readonly hasMore: boolean;
  readonly isEstimate: boolean;
}

/** Read side of the run store, as the API uses it (`FsRunStore` implements it). */
export interface RunQueries {
  listRuns(filter: {
    name?: string;
    status?: RunStatus;
    fromMs?: number;
    toMs?: number;
    dagRunIdContains?: string;
    limit?: number;
  }): Promise<RunSummaryRecord[]>;
  /** Throws not_found. */
  getRun(ref: RunRef, opts?: { root?: RunRef }): Promise<DagRunRecord>;
  /** Throws not_found. */
  latestRun(dagName: string): Promise<DagRunRecord>;
  listChildren(root: RunRef): Promise<RunSummaryRecord[]>;
  saveRun(record: DagRunRecord): Promise<void>;
  readLog(
    path: string,
    q: { head?: number; tail?: number; offset?: number; limit?: number },
  ): Promise<LogChunkData>;
}
