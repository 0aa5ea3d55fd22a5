import { RunStatus, type Clock } from '@trellis/core';
import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';
import type { CustomQueue } from '../queues/queue-of.js';
import type { RunQueues } from '../queues/run-queues.js';
import type { LocalDispatcherPort, RunDispatcher } from '../runs/dispatcher-port.js';
import type { ProcessProbe, RunStorePort } from '../runs/run-store-port.js';
import { RunWaiters, refKey } from './run-waiters.js';
import { serial } from './serial.js';

/** What admission needs, injected once. */
export interface AdmissionDeps {
  readonly store: RunStorePort;
  readonly clock: Clock;
  readonly processes: ProcessProbe;
  /** Runs in this process. */
  readonly local: LocalDispatcherPort;
  /** Worker dispatch for runs whose DAG has a workerSelector (distributed mode). */
  readonly remote?: RunDispatcher | undefined;
  /** Custom queues declared in config.yaml. @default [] */
  readonly queues?: readonly CustomQueue[] | undefined;
  /** Reports what no caller waits for (a queued run that could not start). */
  readonly warn?: ((message: string) => void) | undefined;
}

/** A run this process queued, as created, so its activation need not read it back. */
export interface ParkedRun {
  readonly record: DagRunRecord;
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
}

/**
 * Admission's books, shared by the decision (admission.ts) and the queue pass (queue-pass.ts):
 * the ledger (only in the process that runs the queues), the runs others execute that hold a
 * slot, the runs queued here, the waiters of runs, and the per-run and per-queue serialisation.
 */
export class AdmissionState {
  /** The admission ledger, in the process that runs the queues. */
  ledger: RunQueues | undefined;
  /** Runs another process (or a worker) executes that hold a slot in the ledger, by run key. */
  readonly foreign = new Set<string>();
  readonly parked = new Map<string, ParkedRun>();
  readonly waiters = new RunWaiters();
  /** Tail of the admission chain per queue (processes that do not run the queues). */
  readonly admissions = new Map<string, Promise<unknown>>();
  /** Serialises the ways a queued run leaves its queue (activation, dequeue, activation limit). */
  readonly #leaving = new Map<string, Promise<unknown>>();
  readonly customQueues: ReadonlyMap<string, CustomQueue>;

  constructor(readonly deps: AdmissionDeps) {
    this.customQueues = new Map((deps.queues ?? []).map((q) => [q.name, q]));
  }

  nowIso(): string {
    return this.deps.clock.now().toISOString();
  }

  warn(message: string): void {
    (this.deps.warn ?? (() => undefined))(message);
  }

  /** True when the DAG's runs go to workers (it has a selector and workers are configured). */
  isRemote(dag: Dag): boolean {
    return this.deps.remote !== undefined && Object.keys(dag.workerSelector).length > 0;
  }

  /** The dispatcher of a DAG's runs. */
  dispatcherFor(dag: Dag): RunDispatcher {
    return this.isRemote(dag) && this.deps.remote ? this.deps.remote : this.deps.local;
  }

  isActivating(ref: RunRef): boolean {
    return this.ledger?.isActivating(refKey(ref)) === true;
  }

  leave<T>(ref: RunRef, f: () => Promise<T>): Promise<T> {
    return serial(this.#leaving, refKey(ref), f);
  }

  /** Frees a run's slot and forgets it (it ended or left its queue). */
  forget(ref: RunRef): void {
    this.foreign.delete(refKey(ref));
    this.parked.delete(refKey(ref));
    this.ledger?.release(ref);
  }

  /** Marks a run that is still queued as failed with `error` (it will never start). */
  async failQueued(ref: RunRef, error: string): Promise<void> {
    this.parked.delete(refKey(ref));
    const run = await this.deps.store.getRun(ref).catch(() => undefined);
    if (run?.status !== RunStatus.Queued) return;
    const expectRevision = run.revision;
    run.status = RunStatus.Failed;
    run.finishedAt = this.nowIso();
    run.error = error;
    run.revision++;
    if (!(await this.deps.store.saveRunIf(run, expectRevision))) return; // changed elsewhere
    this.warn(`run ${ref.dagRunId} of DAG "${ref.name}" failed: ${error}`);
    this.waiters.settle(run);
  }
}
