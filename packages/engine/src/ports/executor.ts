import type { Writable } from 'node:stream';
import type { Dag, ExecutorType, Step } from '@trellis/spec';

/** How an execution is stopped: `signal` first, then SIGKILL after `graceMs`. */
export interface StopPolicy {
  /** Fires when the run is stopped, times out, or the step is cancelled. */
  readonly abort: AbortSignal;
  /** The step's `signalOnStop` (default SIGTERM), sent to the whole process group. */
  readonly signal: NodeJS.Signals;
  /** The DAG's `maxCleanUpTimeSec` in ms; then SIGKILL. */
  readonly graceMs: number;
}

/** Everything an executor needs for one execution of a step (variables already expanded). */
export interface ExecContext {
  readonly step: Step;
  readonly dag: Dag;
  /** Absolute working directory. */
  readonly cwd: string;
  /** The complete environment of the process (already filtered and merged). */
  readonly env: Readonly<Record<string, string>>;
  /** Default shell when the step sets none (config `defaultShell`, then $SHELL, then sh). */
  readonly defaultShell: string;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stop: StopPolicy;
  /**
   * When set, stdout is also captured (for `output`, `continueOn.output`, repeat conditions), at
   * most this many bytes; past it `outputExceeded` is reported and the capture stops growing.
   */
  readonly captureLimit?: number;
  /** The run the step belongs to (for child runs and special variables). */
  readonly run: {
    readonly name: string;
    readonly dagRunId: string;
    readonly root: { name: string; dagRunId: string };
  };
}

/**
 * What an execution ended with. Failures are data, never exceptions (docs/architecture.md, "House style"):
 * `exitCode` 0 is success; a signal gives `exitCode` null and `signal` set; `error` explains a
 * failure that has no exit code (spawn failed, container missing).
 */
export interface ExecutionOutcome {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Captured stdout (when `captureLimit` was set), at most that many bytes. */
  readonly output?: string;
  readonly outputExceeded?: boolean;
  readonly error?: string;
  /** A child DAG run's result, for the `dag` executor. */
  readonly child?: { readonly status: number; readonly outputs: Readonly<Record<string, string>> };
  /** Process group id while it ran (recorded for crash clean-up). */
  readonly pid?: number;
}

/** An executor type implementation. `onStart` reports the process group as soon as it exists. */
export interface Executor {
  run(ctx: ExecContext, onStart?: (pid: number) => void): Promise<ExecutionOutcome>;
}

/** Executors by type; the composition root registers the real ones. */
export type ExecutorRegistry = Readonly<Partial<Record<ExecutorType, Executor>>>;
