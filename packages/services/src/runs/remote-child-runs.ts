import { RunStatus, isFinalRunStatus, type Clock } from '@trellis/core';
import type { RunRecorder } from '@trellis/engine';
import { canonicalSelector, type Dag, type DagRunRecord, type RunRef } from '@trellis/spec';
import { ACTIVATION_LIMIT_MS } from '../queues/run-queues.js';
import type { RunDispatcher } from './dispatcher-port.js';
import type { RunStorePort } from './run-store-port.js';

export type Selector = Readonly<Record<string, string>>;

/** A child run's selector: its step's `workerSelector`, or its DAG's when the step has none. */
export const effectiveSelector = (step: Selector, dag: Selector): Selector =>
  Object.keys(step).length > 0 ? step : dag;

/** A child run to execute on workers: its queued record (not yet stored) and DAG snapshot. */
export interface RemoteChild {
  readonly record: DagRunRecord;
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  readonly selector: Selector;
}

export interface RemoteChildDeps {
  readonly store: RunStorePort;
  readonly dispatcher: RunDispatcher;
  readonly clock: Clock;
  readonly warn: (message: string) => void;
}

/** What a child waiting on workers listens for (the coordinator's writes to its record). */
interface Watch {
  readonly running: () => void;
  readonly final: (r: DagRunRecord) => void;
}

const STOPPED_QUEUED = 'stopped before a worker started it';

const refOf = (r: RunRef): RunRef => ({ name: r.name, dagRunId: r.dagRunId });

const keyOf = (r: Pick<DagRunRecord, 'name' | 'dagRunId' | 'root'>): string =>
  `${r.root.name}/${r.root.dagRunId}/${r.name}/${r.dagRunId}`;

/**
 * Child runs sent to workers by a selector (a step's `workerSelector`, or the child DAG's), from
 * the process that holds the dispatcher: the child is stored under its root as queued, waits
 * until a matching worker has a free slot (its run log and the process log say why meanwhile),
 * is handed over, and must become running within the activation limit (10 s) or fails. A stop of
 * the parent cancels it. Its final record comes back through {@link onUpdate} (the coordinator).
 */
export class RemoteChildRuns {
  readonly #watches = new Map<string, Watch>();

  constructor(private readonly deps: RemoteChildDeps) {}

  /**
   * Executes the child on workers; resolves with its final record. `onStored` is called once
   * the child is in the store (queued).
   */
  async run(child: RemoteChild, abort: AbortSignal, onStored?: () => void): Promise<DagRunRecord> {
    const { record, selector } = child;
    const key = keyOf(record);
    let markRunning: () => void = () => undefined;
    const running = new Promise<'running'>((r) => (markRunning = () => r('running')));
    let markFinal: (r: DagRunRecord) => void = () => undefined;
    const final = new Promise<DagRunRecord>((r) => (markFinal = r));
    this.#watches.set(key, { running: markRunning, final: markFinal });
    const stopped = new Promise<'stopped'>((r) => {
      if (abort.aborted) r('stopped');
      else abort.addEventListener('abort', () => r('stopped'), { once: true });
    });
    try {
      await this.deps.store.createRun(record, { dag: child.dag, localDags: child.localDags });
      onStored?.();
      const log = this.deps.store.recorderFor(record);
      const ready = await this.#waitForWorker(record, selector, abort, log);
      if (ready) log.log(`handing the run to a worker with labels ${canonicalSelector(selector)}`);
      await log.close(); // the coordinator appends the worker's lines after these
      if (!ready)
        return (
          (await this.#endQueued(record, RunStatus.Cancelled, STOPPED_QUEUED)) ?? (await final)
        );
      try {
        await this.deps.dispatcher.dispatch({ ...child });
      } catch (e) {
        const why = `handing the run to a worker with labels ${canonicalSelector(selector)} failed: ${(e as Error).message}`;
        return (await this.#endQueued(record, RunStatus.Failed, why)) ?? (await final);
      }
      const timer = new AbortController();
      const outcome = await Promise.race([
        running,
        stopped,
        final.then(() => 'final' as const),
        this.deps.clock.sleep(ACTIVATION_LIMIT_MS, timer.signal).then(
          () => 'overdue' as const,
          () => 'final' as const, // the timer is only aborted once the race is decided
        ),
      ]);
      timer.abort();
      if (outcome === 'overdue') {
        const failed = await this.#endQueued(
          record,
          RunStatus.Failed,
          `the run was handed to workers with labels ${canonicalSelector(selector)} but none started it within ${ACTIVATION_LIMIT_MS / 1000} s; taken off the queue`,
        );
        // Taken off its dispatch queue; a worker that claims it now is refused (it ended).
        if (failed) {
          await this.deps.dispatcher.cancel(refOf(record), record.root).catch(() => undefined);
          return failed;
        }
        // A worker took it just in time: it goes on as any running child.
      }
      const cancel = (): void => {
        this.#cancel(record).catch((e: unknown) =>
          this.deps.warn(
            `stopping child run ${record.dagRunId} of DAG "${record.name}" on its worker failed: ${(e as Error).message}`,
          ),
        );
      };
      if (abort.aborted) cancel();
      else abort.addEventListener('abort', cancel, { once: true });
      const ended = await final;
      abort.removeEventListener('abort', cancel);
      return ended;
    } finally {
      this.#watches.delete(key);
    }
  }

  /**
   * A child run's record changed (the coordinator wrote a worker's report, a claim, a lost
   * worker). True when a child of this process waits for it.
   */
  onUpdate(record: DagRunRecord): boolean {
    const w = this.#watches.get(keyOf(record));
    if (!w) return false;
    if (record.status === RunStatus.Running) w.running();
    else if (isFinalRunStatus(record.status)) w.final(record);
    return true;
  }

  /** Waits until a worker can take the run; false when the parent stopped meanwhile. */
  async #waitForWorker(
    record: DagRunRecord,
    selector: Selector,
    abort: AbortSignal,
    log: RunRecorder,
  ): Promise<boolean> {
    let said = '';
    for (;;) {
      if (abort.aborted) return false;
      let wake: () => void = () => undefined;
      const changed = new Promise<void>((r) => (wake = r));
      const off = this.deps.dispatcher.onCapacity(() => wake());
      abort.addEventListener('abort', wake, { once: true });
      try {
        const why = this.deps.dispatcher.availability(selector);
        if (why === null) return true;
        if (why !== said) {
          said = why;
          log.log(`waiting for a worker: ${why}`);
          this.deps.warn(
            `child run ${record.dagRunId} of DAG "${record.name}" (run ${record.root.dagRunId} of "${record.root.name}") waits for a worker: ${why}`,
          );
        }
        await changed;
      } finally {
        off();
        abort.removeEventListener('abort', wake);
      }
    }
  }

  /** Stops the child: forwarded to its worker, or taken off its dispatch queue. */
  async #cancel(record: DagRunRecord): Promise<void> {
    await this.deps.dispatcher.cancel(refOf(record), record.root);
    // The coordinator did not know it (restarted meanwhile): nobody took it, end it here.
    await this.#endQueued(record, RunStatus.Cancelled, STOPPED_QUEUED);
  }

  /**
   * Ends the child if it is still queued (compare and swap: a claim meanwhile wins) and returns
   * its final record; undefined when it left the queue (a worker has it).
   */
  async #endQueued(
    record: DagRunRecord,
    status: RunStatus,
    error: string,
  ): Promise<DagRunRecord | undefined> {
    const run = await this.deps.store
      .getRun(refOf(record), { root: record.root })
      .catch(() => undefined);
    if (run && isFinalRunStatus(run.status)) return run;
    if (run?.status !== RunStatus.Queued) return undefined;
    const expectRevision = run.revision;
    run.status = status;
    run.finishedAt = this.deps.clock.now().toISOString();
    run.error = error;
    run.revision++;
    if (!(await this.deps.store.saveRunIf(run, expectRevision))) return undefined;
    this.onUpdate(run);
    return run;
  }
}
