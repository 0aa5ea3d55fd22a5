import { RunStatus, isFinalRunStatus, type Clock } from '@trellis/core';
import type { ChildRunRequest, ChildRunResult } from '@trellis/engine';
import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';
import type { RunStorePort } from './run-store-port.js';

/** A child run a worker asks for: its parent runs on that worker, whose labels do not fit. */
export interface WorkerChildStart {
  readonly workerId: string;
  readonly ref: RunRef;
  readonly root: RunRef;
  readonly parent: RunRef;
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  /** Parameters as `KEY="value"` text. */
  readonly params: string;
  /** The child's effective selector (not empty). */
  readonly selector: Readonly<Record<string, string>>;
  readonly traceparent?: string;
}

/**
 * How the coordinator starts, watches and stops child runs for workers (its `StartChildRun`,
 * `GetRun` and `CancelRun`); {@link WorkerChildRuns} implements it in the process that holds the
 * run service, so such a child takes the same path as one whose parent runs in that process.
 */
export interface WorkerChildRunsPort {
  /** Starts the child unless it exists already (idempotent by run id). True when started. */
  start(req: WorkerChildStart): Promise<boolean>;
  /** The child's current record; undefined when it is not stored (yet). */
  status(ref: RunRef, root: RunRef): Promise<DagRunRecord | undefined>;
  /** Stops the child. True when it was known here. */
  cancel(ref: RunRef, root: RunRef): Promise<boolean>;
}

/** The run service's child path (`RunService.run`): a child with a selector goes to workers. */
export interface ChildStarter {
  run(req: ChildRunRequest, opts: { onStored: () => void }): Promise<ChildRunResult>;
}

export interface WorkerChildDeps {
  /** The run service of this process. */
  readonly children: ChildStarter;
  readonly store: RunStorePort;
  readonly clock: Clock;
  readonly warn: (message: string) => void;
}

const keyOf = (ref: RunRef, root: RunRef): string =>
  `${root.name}/${root.dagRunId}/${ref.name}/${ref.dagRunId}`;

const ORPHANED = 'the coordinator restarted before a worker started it; the parent’s step fails';

/**
 * Child runs that workers ask the coordinator for (`StartChildRun`): each goes through the run
 * service's child path as if its parent ran in this process (stored queued under its root,
 * dispatched with its selector, the 10 s activation limit), waited for here so a stop reaches
 * it. The worker learns the outcome by reading the stored record ({@link status}), which
 * survives restarts of this process and reconnects of the worker.
 */
export class WorkerChildRuns implements WorkerChildRunsPort {
  /** Children waited for in this process: their stop controllers. */
  readonly #active = new Map<string, AbortController>();
  /** Why children failed before they were stored, until the worker asks (start or status). */
  readonly #unstored = new Map<string, string>();

  constructor(private readonly deps: WorkerChildDeps) {}

  /** Starts the child unless it exists (here or in the store). True when it was started. */
  async start(req: WorkerChildStart): Promise<boolean> {
    const key = keyOf(req.ref, req.root);
    if (this.#active.has(key)) return false;
    this.#throwIfUnstored(key);
    const stop = new AbortController();
    this.#active.set(key, stop); // before any await: a concurrent retry sees it
    const existing = await this.deps.store
      .getRun(req.ref, { root: req.root })
      .catch(() => undefined);
    if (existing !== undefined) {
      this.#active.delete(key);
      return false; // a retry after a lost reply, or a restart of this process
    }
    const localDags = req.localDags.some((d) => d.name === req.dag.name)
      ? req.localDags
      : [req.dag, ...req.localDags];
    let stored: () => void = () => undefined;
    const storedOrEnded = new Promise<void>((r) => (stored = r));
    void this.deps.children
      .run(
        {
          target: req.dag.name,
          localDags,
          workingDir: '',
          params: req.params,
          dagRunId: req.ref.dagRunId,
          parent: req.parent,
          root: req.root,
          workerSelector: req.selector,
          env: {},
          ...(req.traceparent !== undefined ? { traceparent: req.traceparent } : {}),
          abort: stop.signal,
          dryRun: false,
        },
        { onStored: () => stored() },
      )
      .then(
        (r) => {
          if (r.error !== undefined) this.#unstored.set(key, r.error);
        },
        (e: unknown) => {
          const why = `child run ${req.ref.dagRunId} of DAG "${req.ref.name}" asked for by worker "${req.workerId}" could not be started: ${(e as Error).message}`;
          this.#unstored.set(key, why);
          this.deps.warn(why);
        },
      )
      .finally(() => {
        this.#active.delete(key);
        stored();
      });
    // The answer means "stored": from then on the worker finds the child's record.
    await storedOrEnded;
    if (!this.#active.has(key)) {
      // It ended at once: stored (a quick end) or never (then the worker is told why).
      const run = await this.deps.store.getRun(req.ref, { root: req.root }).catch(() => undefined);
      if (run === undefined) this.#throwIfUnstored(key);
    }
    return true;
  }

  /**
   * The child's stored record. A child left queued by a previous coordinator process (nobody
   * waits for it here) is failed, so its parent's worker does not wait for ever.
   */
  async status(ref: RunRef, root: RunRef): Promise<DagRunRecord | undefined> {
    const key = keyOf(ref, root);
    const run = await this.deps.store.getRun(ref, { root }).catch(() => undefined);
    if (run === undefined && !this.#active.has(key)) this.#throwIfUnstored(key);
    this.#unstored.delete(key);
    if (run?.status !== RunStatus.Queued || this.#active.has(key)) return run;
    return (await this.#endQueued(run, RunStatus.Failed, ORPHANED)) ?? this.status(ref, root);
  }

  /** Stops the child: through its waiter here, or, when it is still queued, at once. */
  async cancel(ref: RunRef, root: RunRef): Promise<boolean> {
    const stop = this.#active.get(keyOf(ref, root));
    if (stop) {
      stop.abort();
      return true;
    }
    const run = await this.deps.store.getRun(ref, { root }).catch(() => undefined);
    if (!run || isFinalRunStatus(run.status)) return false;
    if (run.status === RunStatus.Queued)
      await this.#endQueued(run, RunStatus.Cancelled, 'stopped before a worker started it');
    return true;
  }

  /** A child that ended before it was stored: the error, once (the worker's step fails). */
  #throwIfUnstored(key: string): void {
    const why = this.#unstored.get(key);
    if (why === undefined) return;
    this.#unstored.delete(key);
    throw new Error(why);
  }

  /** Ends a queued child (compare and swap: a claim meanwhile wins). */
  async #endQueued(
    run: DagRunRecord,
    status: RunStatus,
    error: string,
  ): Promise<DagRunRecord | undefined> {
    const expectRevision = run.revision;
    const ended = {
      ...run,
      status,
      error,
      finishedAt: this.deps.clock.now().toISOString(),
      revision: run.revision + 1,
    };
    return (await this.deps.store.saveRunIf(ended, expectRevision)) ? ended : undefined;
  }
}
