import type { Dag, DagRunRecord, NodeRecord, Step } from '@trellis/spec';
import type { Executor } from './executor.js';

/** What a {@link RunHook} sees when a run starts (after its env and params are evaluated). */
export interface RunHookContext {
  readonly dag: Dag;
  /** The live record of the run (read it, never change it). */
  readonly record: DagRunRecord;
  /** The DAG's absolute working directory (relative `volumes` resolve against it). */
  readonly workingDir: string;
  /** The environment every step process starts from (filtered system env, DAG env, params). */
  readonly env: Readonly<Record<string, string>>;
  /** Appends a line to the run log. */
  log(line: string): void;
  /** Fires when the run is stopped or times out. */
  readonly abort: AbortSignal;
}

/**
 * What one hook holds for one run. Every member is optional; none of them may change the run's
 * outcome by throwing: a hook logs its own failures (a mail that cannot be sent is a line in the
 * run log, never a failed run).
 */
export interface RunResources {
  /**
   * An executor that replaces the registry's for `step` in this run (the DAG-level container
   * runs `docker` steps inside itself); `undefined` keeps the registry's.
   */
  executorFor?(step: Step): Executor | undefined;
  /**
   * A step or handler node starts executing (it is running, its processes are not started yet).
   * Returns variables its processes get in addition, e.g. `TRACEPARENT` of the node's span.
   * Synchronous: it runs on the step's start path.
   */
  nodeStarted?(node: NodeRecord): Readonly<Record<string, string>> | undefined;
  /**
   * A step or handler node reached its final status and its step logs are complete on disk
   * (step `mailOnError` attaches them).
   */
  nodeFinished?(node: NodeRecord): Promise<void>;
  /** Releases what the run acquired (removes the DAG-level container), after the handlers. */
  tearDown?(): Promise<void>;
  /** The run's final status is known and saved (`mailOn`), before the run log is closed. */
  runFinished?(record: DagRunRecord): Promise<void>;
}

/**
 * Run-level behaviour around the steps: started once per run, before its first step, and finished
 * once after its handlers. Dry runs set up no hooks.
 */
export interface RunHook {
  setUp(ctx: RunHookContext): Promise<RunResources>;
}
