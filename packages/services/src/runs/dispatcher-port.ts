import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';

/** A run that admission lets start now, with everything executing it needs. */
export interface RunActivation {
  /** The run's record as stored (status running; `queuedAt` kept when it came off a queue). */
  readonly record: DagRunRecord;
  /** The DAG snapshot the run executes (the one stored beside the record). */
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  /**
   * The labels a worker must carry to take the run. @default the DAG's `workerSelector` (a
   * top-level run); a child run gives its step's selector, or its DAG's when the step has none.
   */
  readonly selector?: Readonly<Record<string, string>>;
}

/**
 * Where admitted runs with a `workerSelector` execute (ARCHITECTURE.md section 2): the remote
 * implementation puts them on the BullMQ queue of their selector. Runs without a selector, and
 * every run when no dispatcher is configured, execute in this process.
 */
export interface RunDispatcher {
  /**
   * Null when a worker can take a run with this selector now (a healthy worker whose labels match
   * and that has a free slot); otherwise why not, in words shown to the operator ("no worker has
   * labels gpu=true"). Admission keeps such runs queued and asks again when a worker changes.
   */
  availability(selector: Readonly<Record<string, string>>): string | null;
  /** Hands the run to a worker; resolves once the hand-over is durable (the job is on its queue). */
  dispatch(activation: RunActivation): Promise<void>;
  /**
   * Asks the worker that runs `ref` (stored under `root`, a child run's root; default: itself) to
   * stop it, or takes it off its dispatch queue; the run then ends cancelled.
   */
  cancel(ref: RunRef, root?: RunRef): Promise<void>;
  /** Calls `listener` whenever worker capacity may have grown (a worker joined or freed a slot). */
  onCapacity(listener: () => void): () => void;
}
