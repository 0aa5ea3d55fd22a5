import type { RunRecorder } from '@trellis/engine';
import type {
  LogChunkData,
  LogWindowQuery,
  RunListFilter,
  RunSnapshotData,
} from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { RunSummary } from '@trellis/store';

/** What both stores offer and the suite checks (the ports of docs/architecture.md). */
export interface ConformanceStore {
  createRun(record: DagRunRecord, snapshot: RunSnapshotData): Promise<void>;
  saveRun(record: DagRunRecord): Promise<void>;
  saveRunIf(record: DagRunRecord, expectRevision: number): Promise<boolean>;
  getRun(ref: RunRef, opts?: { root?: RunRef }): Promise<DagRunRecord>;
  getSnapshot(ref: RunRef, opts?: { root?: RunRef }): Promise<RunSnapshotData>;
  latestRun(dagName: string): Promise<DagRunRecord>;
  listRuns(filter?: RunListFilter & { includeChildren?: boolean }): Promise<RunSummary[]>;
  listChildren(root: RunRef): Promise<RunSummary[]>;
  recorderFor(record: DagRunRecord): RunRecorder;
  readLog(path: string, q?: LogWindowQuery): Promise<LogChunkData>;
  requestStop(ref: RunRef, opts?: { root?: RunRef }): Promise<void>;
  watchStop(ref: RunRef, opts: { root?: RunRef }, onStop: () => void): () => void;
  deleteRun(ref: RunRef): Promise<void>;
  deleteRunsOlderThan(dagName: string, days: number): Promise<number>;
  changeStamp(dagName: string): Promise<string | undefined>;
}

/** A fresh, empty store for one test, and another instance over the same data (another process). */
export interface ConformanceSubject {
  readonly store: ConformanceStore;
  another(): ConformanceStore;
  /** The store answers no change stamps (the PostgreSQL store past its listing's memory limit). */
  readonly noChangeStamps?: boolean;
}
