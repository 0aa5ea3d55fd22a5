import { RunStatus } from '@trellis/core';
import { matchesSelector, type ClaimResponse } from '@trellis/coordinator/client';
import {
  childRunResult,
  hostedRunKey,
  newRunRecord,
  resolveRunParams,
  type ChildRunRequest,
  type ChildRunResult,
  type ChildRunner,
} from '@trellis/engine';
import type { Dag, DagRunRecord } from '@trellis/spec';
import { runLogPathIn } from '@trellis/store/log-locations';
import { RunHost } from '../host/run-host.js';
import type { RunJobData } from '../remote/job-data.js';
import type { ActiveRun, ActiveRuns } from './active-runs.js';
import { GrpcRecorder } from './grpc-recorder.js';
import type { Outbox } from './outbox.js';
import { runChildElsewhere } from './remote-child.js';
import type { WorkerAgentDeps } from './worker-agent-deps.js';

type RunExecutorDeps = Omit<
  WorkerAgentDeps,
  'concurrency' | 'redis' | 'prefix' | 'heartbeatEveryMs'
>;

/**
 * Executes runs on a worker through the {@link RunHost}, each recorded by a {@link GrpcRecorder}
 * into the outbox: the runs this worker claimed, and the child runs (call: steps) of its runs,
 * recorded under their root.
 */
export class RunExecutor implements ChildRunner {
  readonly #deps: RunExecutorDeps;
  readonly #runs: ActiveRuns;
  readonly #outbox: Outbox;
  readonly #host: RunHost;
  #logDir = '';

  constructor(deps: RunExecutorDeps, runs: ActiveRuns, outbox: Outbox) {
    this.#deps = deps;
    this.#runs = runs;
    this.#outbox = outbox;
    this.#host = new RunHost({
      clock: deps.clock,
      executors: deps.executors,
      commands: deps.commands,
      ...(deps.events ? { events: deps.events } : {}),
      systemEnv: deps.systemEnv,
      defaultShell: deps.defaultShell,
      ...(deps.runHooks ? { runHooks: deps.runHooks } : {}),
    });
  }

  /** The coordinator's log directory, where child runs started here keep their logs. */
  set logDir(dir: string) {
    this.#logDir = dir;
  }

  /** Executes a run this worker claimed, until it ends. */
  async execute(data: RunJobData, claim: ClaimResponse): Promise<void> {
    const record = JSON.parse(claim.recordJson) as DagRunRecord;
    this.#logDir = claim.logDir || this.#logDir;
    this.#deps.log(`running run ${record.dagRunId} of DAG "${record.name}"`);
    await this.#runRecord(record, data.dag, data.localDags, claim.runLogSize, undefined);
  }

  // A child whose selector (the step's workerSelector, else the child DAG's) this worker's labels
  // do not satisfy is started by the coordinator on matching workers (docs/decisions.md).

  /** Runs a child run (a call: step of a run here) on this worker, or through the coordinator. */
  async run(req: ChildRunRequest): Promise<ChildRunResult> {
    const dag = req.localDags.find((d) => d.name === req.target);
    const fail = (error: string): ChildRunResult => ({
      name: req.target,
      dagRunId: req.dagRunId,
      status: RunStatus.Failed,
      outputs: {},
      error,
    });
    if (!dag)
      return fail(
        `child DAG ${JSON.stringify(req.target)} could not be started on worker "${this.#deps.id}": a worker runs child DAGs defined in the same file as their parent; move it into that file`,
      );
    const selector =
      Object.keys(req.workerSelector).length > 0 ? req.workerSelector : dag.workerSelector;
    if (!matchesSelector(this.#deps.labels, selector))
      return runChildElsewhere(
        {
          client: this.#deps.client,
          clock: this.#deps.clock,
          log: this.#deps.log,
          workerId: this.#deps.id,
        },
        req,
        dag,
        selector,
      );
    const params = resolveRunParams(dag, req.params, false);
    const record = newRunRecord(dag, {
      dagRunId: req.dagRunId,
      params: typeof params === 'string' ? [] : params,
      root: req.root,
      parent: req.parent,
      status: RunStatus.Running,
      now: this.#deps.clock.now().toISOString(),
      log: runLogPathIn(this.#logDir, { name: dag.name, dagRunId: req.dagRunId }),
      owner: { ...this.#deps.owner, workerId: this.#deps.id },
    });
    const final = await this.#runRecord(record, dag, req.localDags, 0, {
      snapshotJson: JSON.stringify({ dag, localDags: req.localDags }),
      abort: req.abort,
    });
    return childRunResult(dag.name, final);
  }

  async #runRecord(
    record: DagRunRecord,
    dag: Dag,
    localDags: readonly Dag[],
    runLogSize: number,
    opts: { snapshotJson: string; abort: AbortSignal } | undefined,
  ): Promise<DagRunRecord> {
    const ref = { name: record.name, dagRunId: record.dagRunId };
    const key = hostedRunKey(record);
    const stop = new AbortController();
    opts?.abort.addEventListener('abort', () => stop.abort(), { once: true });
    const active: ActiveRun = {
      ref,
      root: record.root,
      parent: record.parent,
      startedAt: record.startedAt,
      stop,
      dropped: false,
    };
    this.#runs.add(key, active);
    const recorder = new GrpcRecorder({
      workerId: this.#deps.id,
      ref,
      root: record.root,
      runLogPath: record.log,
      runLogSize,
      ...(opts ? { snapshotJson: opts.snapshotJson } : {}),
      clock: this.#deps.clock,
      outbox: this.#outbox,
      runKey: key,
    });
    try {
      const run = this.#host.execute({
        record,
        dag,
        localDags,
        recorder,
        children: this,
        stop: stop.signal,
      });
      return await run.done;
    } finally {
      this.#runs.end(key, this.#outbox.whenSent(key));
      this.#runs.notifyIdle();
    }
  }
}
