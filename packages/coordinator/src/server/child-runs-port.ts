import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';
import type { Labels } from '../registry/selector.js';

/** A child run a worker asks the coordinator to start on other workers (`StartChildRun`). */
export interface ChildStart {
  /** The worker that runs the parent (for messages). */
  readonly workerId: string;
  /** The child: its DAG's name and the run id the parent's engine chose. */
  readonly ref: RunRef;
  readonly root: RunRef;
  readonly parent: RunRef;
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  /** Parameters as `KEY="value"` text. */
  readonly params: string;
  /** The child's effective selector; never empty. */
  readonly selector: Labels;
  readonly traceparent?: string;
}

/**
 * How the coordinator starts, watches and stops child runs for workers. The process that holds
 * the run service implements it (the CLI wires it), so such a child takes the same path as one
 * whose parent runs in that process.
 */
export interface ChildRunsPort {
  /** Starts the child unless it exists already (idempotent by run id). True when started. */
  start(req: ChildStart): Promise<boolean>;
  /** The child's current record; undefined when it is not stored (yet). */
  status(ref: RunRef, root: RunRef): Promise<DagRunRecord | undefined>;
  /** Stops the child. True when it was known here. */
  cancel(ref: RunRef, root: RunRef): Promise<boolean>;
}
