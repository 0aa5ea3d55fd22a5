import type { Clock } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';

/** Options of `FsRunStore`. */
export interface FsRunStoreOptions {
  /** Absolute directory for run records (`<dataDir>/runs/...`). */
  readonly dataDir: string;
  /** Absolute directory for run and step logs. */
  readonly logDir: string;
  /** Time for run-log lines, retention and lock ages. */
  readonly clock: Clock;
  /**
   * Receives a sentence for each problem the store works around instead of failing: a corrupt
   * record skipped by an index rebuild, a log write error. @default ignore
   */
  readonly warn?: (message: string) => void;
  /** The home folder a DAG's `logDir` starting with `~` means. @default os.homedir() */
  readonly userHome?: string;
  /** Compact a DAG's index when it holds more than this many lines per live run. @default 4 */
  readonly indexCompactFactor?: number;
  /**
   * Called with a copy of each record once it is written (created, saved, or swapped in; not
   * for a stale save that was ignored): every run status change, local or a worker's, passes
   * here. The event bus hangs off it (services `RecordTransitions`). The copy is for reading
   * only: its nodes unchanged since an earlier save are that save's copy's objects
   * (packages/store/src/runs/record-json.ts). @default none
   */
  readonly onRecordSaved?: (record: DagRunRecord) => void;
}

/** Where a child run is stored: under its root run. */
export interface RootOption {
  /** The root run of a child run; absent, undefined or the run itself for a top-level run. */
  readonly root?: RunRef | undefined;
}
