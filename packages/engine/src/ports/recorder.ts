import type { Writable } from 'node:stream';
import type { DagRunRecord } from '@trellis/spec';

/** The log files of one execution of a node. */
export interface StepLogs {
  /** Paths as the store knows them (the API's node `stdout`/`stderr`, `DAG_RUN_STEP_*_FILE`). */
  readonly stdoutPath: string;
  readonly stderrPath: string;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /**
   * Flushes and closes both streams. Rejects with an error naming the file and the cause when a
   * write to either of them failed (a full disk): the step's log is incomplete.
   */
  close(): Promise<void>;
}

/**
 * The engine's only way out (docs/architecture.md, "The path of a run"): locally the store writes files; on a
 * worker a gRPC recorder ships the same calls to the coordinator.
 */
export interface RunRecorder {
  /** Path of the run log (the record's `log`). */
  readonly runLogPath: string;
  /**
   * Persists the complete current record. The record is serialised (or copied) during the call,
   * before the returned promise settles, so the engine may go on changing it. Calls are ordered:
   * the store applies them in call order, and a crash leaves the last completed save, never a
   * torn one.
   */
  save(record: DagRunRecord): Promise<void>;
  /** Appends one line to the run log. */
  log(line: string): void;
  /**
   * Opens the log files of a node execution, appending when they exist (a retry appends to the
   * same files). `key` is the node name; handler nodes use `onExit` etc.
   */
  openStepLogs(key: string): Promise<StepLogs>;
  /**
   * Flushes and closes the run log, with the run's step logs made durable: the engine calls it
   * before the final status is saved, and again at the very end (a later `log` reopens it).
   */
  close(): Promise<void>;
}
