import type { RunStatus, NodeStatus } from '@trellis/core';
import type { Step } from './step.js';

/** A reference to a DAG run by DAG name and run id. */
export interface RunRef {
  readonly name: string;
  readonly dagRunId: string;
}

/** A precondition as evaluated: `error` is empty when it held (spec: `{condition, expected, error}`). */
export interface ConditionResult {
  readonly condition: string;
  readonly expected: string;
  readonly error: string;
}

/** A child DAG run started by a node (spec: node `children`). */
export interface ChildRunRef {
  readonly dagRunId: string;
  readonly name: string;
  /** The child's params as `KEY="value"` text. */
  readonly params: string;
  readonly status: RunStatus;
}

/**
 * The record of one node (a step's result) in a run. Timestamps are ISO 8601 UTC, `''` when they
 * do not apply (spec: Conventions).
 */
export interface NodeRecord {
  /** The step as resolved for this run. */
  step: Step;
  /** Paths of the step's stdout and stderr log files; `''` before the step started. */
  stdout: string;
  stderr: string;
  startedAt: string;
  finishedAt: string;
  status: NodeStatus;
  /** Retries made under `retryPolicy`. */
  retryCount: number;
  /** Completed executions (repeats count each; a retried failure counts once). */
  doneCount: number;
  /** When the last retry started; `''` when none. */
  retriedAt: string;
  children: ChildRunRef[];
  childrenRepeated: ChildRunRef[];
  /** `''` when there is no error. */
  error: string;
  /** Output variables this node set (`output:`), name -> value. */
  outputs: Record<string, string>;
  /** Exit code of the last execution, when there was one. */
  exitCode?: number;
  /** Process group of the running execution, so a crash can be cleaned up. */
  pid?: number;
}

/** Who executes a run: the process (and host) that owns it while it runs. */
export interface RunOwner {
  readonly pid: number;
  readonly host: string;
  /** The owner process's own start time, to tell a live owner from a reused pid. */
  readonly processStart: string;
  /** `local`, or the id of the worker running it. */
  readonly workerId: string;
}

/**
 * The complete record of a DAG run: the spec's run summary and details in domain form
 * (camelCase; the API maps it to the wire shape).
 */
export interface DagRunRecord {
  name: string;
  dagRunId: string;
  root: RunRef;
  /** Absent for a top-level run. */
  parent?: RunRef;
  status: RunStatus;
  createdAt: string;
  queuedAt: string;
  startedAt: string;
  finishedAt: string;
  /** Path of the run log. */
  log: string;
  /**
   * Final parameters, in order; positional ones named `1`, `2`, ... `literal`: a value a parent
   * run gave its child, already expanded there, so the child's start does not evaluate it again.
   */
  params: { name: string; value: string; literal?: boolean }[];
  nodes: NodeRecord[];
  onExit?: NodeRecord;
  onSuccess?: NodeRecord;
  onFailure?: NodeRecord;
  onCancel?: NodeRecord;
  /** Evaluated DAG-level preconditions. */
  preconditions: ConditionResult[];
  /** Why the run failed or was cancelled as a whole (timeout, DAG precondition, crash); `''` if none. */
  error: string;
  owner?: RunOwner;
  /** The queue the run waits in or ran through. */
  queue: string;
  /** Increases on every save; readers keep the highest. */
  revision: number;
  /**
   * W3C trace context of the span that started this run (a traced parent step); its run span
   * continues that trace. Absent when the run is not part of a trace.
   */
  traceparent?: string;
}

/** The run's handler nodes by their record key. */
export const HANDLER_RECORD_KEYS = ['onSuccess', 'onFailure', 'onCancel', 'onExit'] as const;
