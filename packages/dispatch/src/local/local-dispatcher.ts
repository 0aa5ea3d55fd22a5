import { RunStatus } from '@trellis/core';
import type { ChildRunner } from '@trellis/engine';
import type { LocalDispatcherPort, RunActivation, RunStorePort } from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { RunHost, type RunningRun } from '../host/run-host.js';
import { dryRecorder } from './dry-recorder.js';

export interface LocalDispatcherDeps {
  readonly host: RunHost;
  readonly store: Pick<RunStorePort, 'recorderFor' | 'watchStop' | 'requestStop'>;
  /** Where the runs' `run:` steps start child runs (the services' child path). */
  readonly children: () => ChildRunner;
}

/** A run to execute in this process now. */
export interface LocalLaunch extends RunActivation {
  /** Aborting it stops the run (a child's parent stopping). */
  readonly stop?: AbortSignal;
  /** Everything but executing commands; nothing is stored; the log goes to `onLog`. */
  readonly dryRun?: boolean;
  readonly onLog?: (line: string) => void;
}

/**
 * The local implementation of the dispatcher port: admitted runs execute in this process on the
 * {@link RunHost}, recording to the store; a stop request in the store stops them. Each run's end
 * is reported to the `onRunUpdate` listeners, as the remote dispatcher reports a worker's runs.
 */
export class LocalDispatcher implements LocalDispatcherPort {
  readonly #deps: LocalDispatcherDeps;
  readonly #listeners = new Set<(record: DagRunRecord) => void>();

  constructor(deps: LocalDispatcherDeps) {
    this.#deps = deps;
  }

  /** How many runs execute in this process now (children included). */
  get activeCount(): number {
    return this.#deps.host.size;
  }

  /** True while the run executes in this process. */
  isRunning(record: RunRef & { root: RunRef }): boolean {
    return this.#deps.host.has(record);
  }

  /** Local runs wait for nothing but their queue. */
  availability(): string | null {
    return null;
  }

  /** Executes the stored run here; resolves once it is running on disk (or ended at once). */
  async dispatch(activation: RunActivation): Promise<void> {
    const run = this.launch(activation);
    run.done.then(
      (final) => this.#emit(final),
      (e: unknown) =>
        this.#emit({
          ...activation.record,
          status: RunStatus.Failed,
          error: `internal error: ${(e as Error).message}`,
        }),
    );
    await run.started;
  }

  /** Executes a run here now (child and dry runs: their caller waits for `done` itself). */
  launch(l: LocalLaunch): RunningRun {
    const { record } = l;
    const dryRun = l.dryRun ?? false;
    const recorder = dryRun
      ? dryRecorder(l.onLog ?? (() => undefined))
      : this.#deps.store.recorderFor(record);
    const stop = new AbortController();
    l.stop?.addEventListener('abort', () => stop.abort(), { once: true });
    const scope = record.parent ? { root: record.root } : {};
    const unwatch = dryRun
      ? () => undefined
      : this.#deps.store.watchStop({ name: record.name, dagRunId: record.dagRunId }, scope, () =>
          stop.abort(),
        );
    const run = this.#deps.host.execute({
      record,
      dag: l.dag,
      localDags: l.localDags,
      recorder,
      children: this.#deps.children(),
      stop: stop.signal,
      dryRun,
    });
    void run.done.then(unwatch, unwatch);
    return run;
  }

  /** Asks the run to stop through the store (its watcher aborts it); it ends cancelled. */
  cancel(ref: RunRef, root?: RunRef): Promise<void> {
    return this.#deps.store.requestStop(ref, root ? { root } : {});
  }

  /** Local capacity is the queues' business: nothing to hear. */
  onCapacity(): () => void {
    return () => undefined;
  }

  onRunUpdate(listener: (record: DagRunRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Graceful shutdown: see {@link RunHost.drain}. */
  drain(graceMs: number): Promise<void> {
    return this.#deps.host.drain(graceMs);
  }

  #emit(record: DagRunRecord): void {
    for (const l of [...this.#listeners]) l(record);
  }
}

/** The local run path of one process: a {@link RunHost} and the local dispatcher over the store. */
export const createLocalDispatcher = (
  deps: ConstructorParameters<typeof RunHost>[0] & Omit<LocalDispatcherDeps, 'host'>,
): LocalDispatcher => {
  const { store, children, ...hostDeps } = deps;
  return new LocalDispatcher({ host: new RunHost(hostDeps), store, children });
};
