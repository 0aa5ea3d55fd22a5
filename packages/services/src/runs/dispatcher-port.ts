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
 * Where admitted runs execute (docs/architecture.md, "The path of a run"). Two implementations
 * in @trellis/dispatch: the local dispatcher (this process) and the BullMQ dispatcher (workers,
 * for runs with a `workerSelector` when workers are configured).
 */
export interface RunDispatcher {
  /**
   * Null when a run with this selector can start now (locally: always; remotely: a healthy worker
   * whose labels match has a free slot); otherwise why not, in words shown to the operator ("no
   * worker has labels gpu=true"). Admission keeps such runs queued and asks again when capacity
   * changes.
   */
  availability(selector: Readonly<Record<string, string>>): string | null;
  /**
   * Hands the run over; resolves once the hand-over is durable (locally: the run is running on
   * disk; remotely: the job is on its queue).
   */
  dispatch(activation: RunActivation): Promise<void>;
  /**
   * Asks whoever runs `ref` (stored under `root`, a child run's root; default: itself) to stop
   * it, or takes it off its dispatch queue; the run then ends cancelled.
   */
  cancel(ref: RunRef, root?: RunRef): Promise<void>;
  /** Calls `listener` whenever capacity may have grown (a worker joined or freed a slot). */
  onCapacity(listener: () => void): () => void;
  /**
   * The one run-update event: a dispatched run became running, or ended (its final record). The
   * same for local and remote runs; admission frees slots and resolves waiters from it.
   */
  onRunUpdate(listener: (record: DagRunRecord) => void): () => void;
}

/** A run executing in this process: its completion, and when it is running on disk. */
export interface LocalRun {
  /** The final record; rejects only for a bug (the engine never throws for a failing step). */
  readonly done: Promise<DagRunRecord>;
  readonly started: Promise<void>;
}

/** What the local dispatcher offers beyond the port: child and dry runs, and the shutdown. */
export interface LocalDispatcherPort extends RunDispatcher {
  /** Executes a run here now, outside admission (child and dry runs: their caller waits). */
  launch(l: {
    readonly record: DagRunRecord;
    readonly dag: Dag;
    readonly localDags: readonly Dag[];
    readonly stop?: AbortSignal;
    readonly dryRun?: boolean;
    readonly onLog?: (line: string) => void;
  }): LocalRun;
  /** True while the run executes in this process. */
  isRunning(record: RunRef & { root: RunRef }): boolean;
  /** How many runs execute in this process now (children included). */
  readonly activeCount: number;
  /** Waits up to `graceMs` for the runs here, then stops the rest and waits for them. */
  drain(graceMs: number): Promise<void>;
}
