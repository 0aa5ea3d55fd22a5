import type { NodeStatus } from '@trellis/core';
import { RUN_ID_PATTERN, RunStatus, badRequest, type Clock, type IdGenerator } from '@trellis/core';
import {
  newRunRecord,
  resolveRunParams,
  type ChildRunRequest,
  type ChildRunResult,
  type ChildRunner,
  type RunParams,
} from '@trellis/engine';
import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';
import { Admission, type StartedRun, type Trigger } from '../admission/admission.js';
import type { DagCatalog } from '../dags/dag-catalog-port.js';
import type { CustomQueue } from '../queues/queue-of.js';
import { ChildRuns } from './child-runs.js';
import { parseInlineSpec } from './inline-spec.js';
import type { LocalDispatcherPort, RunDispatcher } from './dispatcher-port.js';
import { RemoteChildRuns } from './remote-child-runs.js';
import { restartRun, retryRun, stopAllRuns, stopRun, type RerunDeps } from './run-controls.js';
import type { ProcessProbe, RunStorePort } from './run-store-port.js';
import { setStepStatus } from './step-status.js';

export type { StartedRun, Trigger } from '../admission/admission.js';

/** Everything RunService needs, injected once. */
export interface RunServiceDeps {
  readonly store: RunStorePort;
  readonly dags: DagCatalog;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly processes: ProcessProbe;
  /** Runs in this process (the local dispatcher of @trellis/dispatch). */
  readonly local: LocalDispatcherPort;
  /** Worker dispatch for runs whose DAG has a workerSelector (distributed mode). */
  readonly dispatcher?: RunDispatcher;
  /** Custom queues declared in config.yaml. @default [] */
  readonly queues?: readonly CustomQueue[];
  /**
   * Keep the admission ledger from the start (tests; the queue process gets it from the
   * scheduler's queue processor). Without a ledger (a CLI `start`), admission counts from the
   * store and leaves queued runs to the queue process. @default false
   */
  readonly processQueues?: boolean;
  /** Reports what no caller waits for (a queued run that could not start). */
  readonly warn?: (message: string) => void;
}

export interface StartRequest {
  /** A DAG name in the DAGs folder, or a path. */
  readonly dag: string;
  /** Parameters: JSON object text or the `KEY=value "quoted" positional` form. */
  readonly params?: string;
  readonly dagRunId?: string;
  /** Directory relative DAG paths resolve against. */
  readonly baseDir?: string;
  /** Refuse with already_running when a run of the DAG is running (spec: start, singleton). */
  readonly singleton?: boolean;
  /** Everything but executing commands; nothing is stored; the log goes to `onLog`. */
  readonly dryRun?: boolean;
  readonly onLog?: (line: string) => void;
  /** The queue to wait in, instead of the DAG's (enqueue's `queue`). */
  readonly queue?: string;
  /** What asks for the run. @default 'start' */
  readonly trigger?: Trigger;
}

/**
 * The run use cases that `api`, `cli` and the scheduler call: start, enqueue, retry, restart,
 * stop, dequeue, dry run and step status of DAG runs. Each trigger goes through {@link Admission};
 * child runs through {@link ChildRuns}; nothing here executes a run.
 */
export class RunService implements ChildRunner {
  /** Where a dry run's log goes, so its child runs log there too. */
  private dryLog: ((line: string) => void) | undefined;
  readonly admission: Admission;
  readonly #children: ChildRuns;
  readonly #rerun: RerunDeps;

  constructor(private readonly deps: RunServiceDeps) {
    this.admission = new Admission(
      {
        store: deps.store,
        clock: deps.clock,
        processes: deps.processes,
        local: deps.local,
        remote: deps.dispatcher,
        queues: deps.queues,
        warn: deps.warn,
      },
      { ledger: deps.processQueues === true },
    );
    const remote = deps.dispatcher
      ? new RemoteChildRuns({
          store: deps.store,
          dispatcher: deps.dispatcher,
          clock: deps.clock,
          warn: (m) => deps.warn?.(m),
        })
      : undefined;
    if (remote) this.admission.onChildUpdate = (r) => remote.onUpdate(r);
    this.#rerun = {
      store: deps.store,
      clock: deps.clock,
      ids: deps.ids,
      admission: this.admission,
    };
    this.#children = new ChildRuns({
      store: deps.store,
      dags: deps.dags,
      clock: deps.clock,
      processes: deps.processes,
      local: deps.local,
      remote,
      dryLog: () => this.dryLog,
      place: (selector, dryRun) => this.admission.placeChild(selector, dryRun),
    });
  }

  /** How many runs this process executes right now (children included). */
  get activeCount(): number {
    return this.deps.local.activeCount;
  }

  /**
   * Graceful shutdown: waits up to `graceMs` for the runs of this process to finish, then stops
   * the rest (their steps get their stop signals; the runs end cancelled) and waits for them.
   */
  drain(graceMs: number): Promise<void> {
    return this.deps.local.drain(graceMs);
  }

  /** Starts a run of a DAG now, in this process. */
  async start(req: StartRequest): Promise<StartedRun> {
    const loaded = this.deps.dags.load(req.dag, req.baseDir);
    return this.startLoaded(loaded.dag, loaded.localDags, req);
  }

  /** Starts a run of a DAG already loaded (API: by file name; inline specs). */
  async startLoaded(
    dag: Dag,
    localDags: readonly Dag[],
    req: Omit<StartRequest, 'dag' | 'baseDir'>,
  ): Promise<StartedRun> {
    const params = this.resolveParams(dag, req.params);
    const dagRunId = this.checkRunId(req.dagRunId);
    if (req.dryRun) return this.dryRun(dag, localDags, dagRunId, params, req.onLog);
    return this.admission.admit({
      dag,
      localDags,
      dagRunId,
      params,
      trigger: req.trigger ?? 'start',
      ...(req.singleton !== undefined ? { singleton: req.singleton } : {}),
      ...(req.queue !== undefined ? { queue: req.queue } : {}),
    });
  }

  /** Everything but executing commands; nothing is stored; the log goes to `onLog`. */
  private async dryRun(
    dag: Dag,
    localDags: readonly Dag[],
    dagRunId: string,
    params: RunParams,
    onLog: ((line: string) => void) | undefined,
  ): Promise<StartedRun> {
    this.dryLog = onLog;
    const record = newRunRecord(dag, {
      dagRunId,
      params,
      status: RunStatus.NotStarted,
      now: this.deps.clock.now().toISOString(),
      log: '',
      owner: this.deps.processes.owner,
    });
    const run = this.deps.local.launch({
      record,
      dag,
      localDags,
      dryRun: true,
      ...(onLog ? { onLog } : {}),
    });
    await run.started;
    return { record, queued: false, done: run.done };
  }

  /** Puts a run of a DAG on its queue (spec: enqueue); it starts when its turn comes. */
  enqueue(
    dag: Dag,
    localDags: readonly Dag[],
    req: { params?: string; dagRunId?: string; queue?: string },
  ): Promise<StartedRun> {
    return this.startLoaded(dag, localDags, { ...req, trigger: 'enqueue' });
  }

  /**
   * Starts a run from YAML text without storing a DAG file (POST /dag-runs). The name comes from
   * `name` or the spec and is required.
   */
  async startSpec(req: {
    spec: string;
    name?: string;
    params?: string;
    dagRunId?: string;
    singleton?: boolean;
  }): Promise<StartedRun> {
    const file = parseInlineSpec(req.spec, req.name, this.deps.dags);
    return this.startLoaded(
      file.main.dag,
      file.localDags.map((d) => d.dag),
      {
        ...(req.params !== undefined ? { params: req.params } : {}),
        ...(req.dagRunId !== undefined ? { dagRunId: req.dagRunId } : {}),
        ...(req.singleton !== undefined ? { singleton: req.singleton } : {}),
      },
    );
  }

  /** Asks every running run of the DAG to stop; returns the problems (spec: stop-all `errors`). */
  stopAll(dagName: string): Promise<string[]> {
    return stopAllRuns(this.deps.store, dagName);
  }

  /** Takes a queued run off its queue: it ends cancelled and stays in history. */
  dequeue(ref: RunRef): Promise<void> {
    return this.admission.dequeue(ref);
  }

  /**
   * Sets one step's status in a run that is not running (spec: step status update), e.g. to
   * mark a failed step done before a retry. The run's own status is left as it is.
   */
  setStepStatus(ref: RunRef, stepName: string, status: NodeStatus, root?: RunRef): Promise<void> {
    return setStepStatus(this.deps.store, { ref, stepName, status, root });
  }

  /**
   * Retries a run as a new run (docs/decisions.md): the original's DAG snapshot and
   * params; succeeded steps keep their result; with `stepName` only that step runs again.
   */
  retry(ref: RunRef, opts: { newRunId?: string; stepName?: string } = {}): Promise<StartedRun> {
    return retryRun(this.#rerun, ref, opts.stepName, () => this.checkRunId(opts.newRunId));
  }

  /** Asks the process running `ref` to stop it (asynchronous: the run ends cancelled). */
  stop(ref: RunRef): Promise<void> {
    return stopRun(this.deps.store, ref);
  }

  /**
   * Restarts a running run: asks it to stop, waits until it ended (at most the DAG's
   * maxCleanUpTimeSec plus `waitLimitMs`), waits `restartWaitSec`, then starts a new run from the
   * same DAG snapshot and params.
   */
  restart(ref: RunRef, waitLimitMs = 60_000): Promise<StartedRun> {
    return restartRun(this.#rerun, ref, waitLimitMs);
  }

  /** The record of a run, or of the DAG's latest run. */
  status(name: string, dagRunId?: string): Promise<DagRunRecord> {
    return dagRunId ? this.deps.store.getRun({ name, dagRunId }) : this.deps.store.latestRun(name);
  }

  /** What the scheduler's queue processor drives (`runQueueProcessor` in @trellis/scheduler). */
  readonly queues = {
    reconcile: (): Promise<void> => this.admission.reconcile(),
    runsEnded: (records: readonly DagRunRecord[]): void => this.admission.ended(records),
    releaseQueues: (): void => this.admission.releaseQueues(),
  };

  /** One pass of the queues where this service keeps the ledger (tests). */
  reconcileQueues(): Promise<void> {
    return this.admission.reconcileIfLedger();
  }

  /** The engine's ChildRunner: see {@link ChildRuns}. */
  run(req: ChildRunRequest, opts: { onStored?: () => void } = {}): Promise<ChildRunResult> {
    return this.#children.run(req, opts);
  }

  private checkRunId(id: string | undefined): string {
    if (id === undefined || id === '') return this.deps.ids.newRunId();
    if (!RUN_ID_PATTERN.test(id)) {
      throw badRequest(
        `invalid run id ${JSON.stringify(id.slice(0, 80))}: use letters, digits, "-" and "_", at most 64 characters`,
      );
    }
    return id;
  }

  /** The DAG's params with the caller's overrides applied by name and position. */
  private resolveParams(dag: Dag, input: string | undefined): RunParams {
    const params = resolveRunParams(dag, input);
    if (typeof params === 'string') throw badRequest(`invalid params: ${params}`);
    return params;
  }
}
