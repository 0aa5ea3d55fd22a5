import { AppError, RunStatus, type Clock } from '@trellis/core';
import {
  childRunResult,
  newRunRecord,
  resolveRunParams,
  type ChildRunRequest,
  type ChildRunResult,
  type ChildRunner,
} from '@trellis/engine';
import type { Dag } from '@trellis/spec';
import type { DagCatalog } from '../dags/dag-catalog-port.js';
import type { LocalDispatcherPort } from './dispatcher-port.js';
import { effectiveSelector, type RemoteChildRuns, type Selector } from './remote-child-runs.js';
import type { ProcessProbe, RunStorePort } from './run-store-port.js';

export interface ChildRunsDeps {
  readonly store: RunStorePort;
  readonly dags: DagCatalog;
  readonly clock: Clock;
  readonly processes: ProcessProbe;
  readonly local: LocalDispatcherPort;
  /** Child runs sent to workers by a selector (only with a worker dispatcher). */
  readonly remote?: RemoteChildRuns | undefined;
  /** Where a dry run's log goes, so its child runs log there too. */
  readonly dryLog: () => ((line: string) => void) | undefined;
  /** Admission's decision: this process, or the workers of the child's selector. */
  readonly place: (selector: Selector, dryRun: boolean) => 'here' | 'workers';
}

/**
 * The child path (`run:` steps), the engine's ChildRunner in this process: a child run is stored
 * under its root run and executes where admission places it (`Admission.placeChild`): here, or
 * on the workers of the step's `workerSelector` (or else the child DAG's).
 */
export class ChildRuns implements ChildRunner {
  constructor(private readonly deps: ChildRunsDeps) {}

  async run(
    req: ChildRunRequest,
    opts: {
      /** Called once a child sent to workers is stored (queued), before it is dispatched. */
      onStored?: () => void;
    } = {},
  ): Promise<ChildRunResult> {
    let dag: Dag | undefined = req.localDags.find((d) => d.name === req.target);
    let localDags = req.localDags;
    if (!dag) {
      try {
        const loaded = this.deps.dags.load(req.target, req.workingDir);
        dag = loaded.dag;
        localDags = loaded.localDags;
      } catch (e) {
        const msg = AppError.is(e) ? e.message : (e as Error).message;
        return {
          name: req.target,
          dagRunId: req.dagRunId,
          status: RunStatus.Failed,
          outputs: {},
          error: `child DAG ${JSON.stringify(req.target)} could not be started: ${msg}`,
        };
      }
    }
    const selector = effectiveSelector(req.workerSelector, dag.workerSelector);
    if (this.deps.remote && this.deps.place(selector, req.dryRun) === 'workers')
      return this.#runOnWorkers(this.deps.remote, req, dag, localDags, selector, opts.onStored);
    return this.#runHere(req, dag, localDags);
  }

  #record(req: ChildRunRequest, dag: Dag, status: RunStatus, log: string) {
    const params = resolveRunParams(dag, req.params, false);
    return newRunRecord(dag, {
      dagRunId: req.dagRunId,
      params: typeof params === 'string' ? [] : params,
      parent: req.parent,
      root: req.root,
      traceparent: req.traceparent,
      status,
      now: this.deps.clock.now().toISOString(),
      log,
      ...(status === RunStatus.Queued ? {} : { owner: this.deps.processes.owner }),
    });
  }

  async #runHere(
    req: ChildRunRequest,
    dag: Dag,
    localDags: readonly Dag[],
  ): Promise<ChildRunResult> {
    const ref = { name: dag.name, dagRunId: req.dagRunId };
    const dryRun = req.dryRun;
    const record = dryRun
      ? this.#record(req, dag, RunStatus.NotStarted, '')
      : this.#record(req, dag, RunStatus.Running, this.deps.store.runLogPath(ref, dag.logDir));
    if (!dryRun) await this.deps.store.createRun(record, { dag, localDags });
    const onLog = this.deps.dryLog();
    const run = this.deps.local.launch({
      record,
      dag,
      localDags,
      stop: req.abort,
      dryRun,
      ...(onLog ? { onLog } : {}),
    });
    return childRunResult(dag.name, await run.done);
  }

  /** A child run for workers: stored queued under its root, then dispatched by `selector`. */
  async #runOnWorkers(
    remote: RemoteChildRuns,
    req: ChildRunRequest,
    dag: Dag,
    localDags: readonly Dag[],
    selector: Selector,
    onStored?: () => void,
  ): Promise<ChildRunResult> {
    const ref = { name: dag.name, dagRunId: req.dagRunId };
    const record = this.#record(
      req,
      dag,
      RunStatus.Queued,
      this.deps.store.runLogPath(ref, dag.logDir),
    );
    record.queuedAt = record.createdAt;
    const final = await remote.run({ record, dag, localDags, selector }, req.abort, onStored);
    return childRunResult(dag.name, final, { remote: true });
  }
}
