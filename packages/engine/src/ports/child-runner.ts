import { RunStatus, type NodeStatus } from '@trellis/core';
import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';

/** A request to run a child DAG for a node (`run:`, `call:`, `executor: dag`). */
export interface ChildRunRequest {
  /** The target as written after expansion: a DAG of the parent's file, a name, or a path. */
  readonly target: string;
  /** The parent's file: DAGs defined next to it are looked up first. */
  readonly localDags: readonly Dag[];
  /** The parent DAG's working directory (relative paths resolve against it). */
  readonly workingDir: string;
  /** Parameters for the child as `KEY="value"` text. */
  readonly params: string;
  /** The child's run id (deterministic per parent run, step, params and attempt). */
  readonly dagRunId: string;
  readonly parent: RunRef;
  readonly root: RunRef;
  /**
   * Labels a worker must carry to run it (the step's `workerSelector`; when empty, the child
   * DAG's own `workerSelector` applies).
   */
  readonly workerSelector: Readonly<Record<string, string>>;
  /** Environment of the parent step, passed on to the child's steps. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * W3C trace context (`TRACEPARENT`) of the step that starts the child, when the step is traced:
   * the child's run continues that trace, so a nested workflow is one trace.
   */
  readonly traceparent?: string;
  readonly abort: AbortSignal;
  readonly dryRun: boolean;
}

/** How a child run ended. */
export interface ChildRunResult {
  readonly name: string;
  readonly dagRunId: string;
  readonly status: RunStatus;
  /** Output variables of every node of the child, name -> value. */
  readonly outputs: Readonly<Record<string, string>>;
  /**
   * Set when the child could not be started at all (unknown DAG, invalid definition), or failed
   * for a reason outside its steps (its worker was lost, no worker took it): the step's error.
   */
  readonly error?: string;
}

/**
 * Starts child runs and waits for them. The composition root implements it over the engine and
 * the store (locally) or the dispatcher (on workers).
 */
export interface ChildRunner {
  run(req: ChildRunRequest): Promise<ChildRunResult>;
}

/** The node status a child run's status maps to (as the peer does). */
export type ChildNodeStatus = Extract<NodeStatus, 2 | 3 | 4 | 6>;

/**
 * What a child run that ended as `record` gives its step: its status and the output variables of
 * all its nodes. With `remote` (a child that ran on other workers), a failure outside its steps
 * (its record's `error`: the worker was lost, no worker took it) becomes the step's error.
 */
export const childRunResult = (
  dagName: string,
  record: DagRunRecord,
  opts: { readonly remote?: boolean } = {},
): ChildRunResult => {
  const outputs: Record<string, string> = {};
  for (const n of record.nodes) Object.assign(outputs, n.outputs);
  const result = { name: dagName, dagRunId: record.dagRunId, status: record.status, outputs };
  if (!opts.remote || record.status !== RunStatus.Failed || record.error === '') return result;
  return {
    ...result,
    error: `child DAG run ${record.dagRunId} of "${dagName}" failed: ${record.error}`,
  };
};
