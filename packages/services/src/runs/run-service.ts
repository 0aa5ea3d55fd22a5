import { PassThrough } from 'node:stream';
import {
  AppError,
  ErrorCode,
  NodeStatus,
  RUN_ID_PATTERN,
  RunStatus,
  badRequest,
  isFinalRunStatus,
  notFound,
  type Clock,
  type IdGenerator,
} from '@trellis/core';
import {
  applyParamOverrides,
  parseParamsInput,
  runDag,
  type ChildRunRequest,
  type ChildRunResult,
  type ChildRunner,
  type CommandRunner,
  type EngineEvents,
  type ExecutorRegistry,
  type RunRecorder,
} from '@trellis/engine';
import { tokenizeParams, type Dag, type DagRunRecord, type RunRef } from '@trellis/spec';
import type { FsDagCatalog } from '../dags/fs-dag-catalog.js';
import { retryNodes } from './retry-plan.js';
import type { ProcessProbe, RunSnapshotData, RunStorePort } from './run-store-port.js';

/** Everything RunService needs, injected once. */
export interface RunServiceDeps {
  readonly store: RunStorePort;
  readonly dags: FsDagCatalog;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly executors: ExecutorRegistry;
  readonly commands: CommandRunner;
  readonly processes: ProcessProbe;
  readonly systemEnv: Readonly<Record<string, string>>;
  readonly defaultShell: string;
  readonly events?: EngineEvents;
}

export interface StartRequest {
  /** A DAG name in the DAGs folder, or a path. */
  readonly dag: string;
  /** Parameters: JSON object text or the `KEY=value "quoted" positional` form. */
  readonly params?: string;
  readonly dagRunId?: string;
  /** Directory relative DAG paths resolve against. */
  readonly baseDir?: string;
  /** Everything but executing commands; nothing is stored; the log goes to `onLog`. */
  readonly dryRun?: boolean;
  readonly onLog?: (line: string) => void;
}

/** A started run: its record as created, and the promise of its final record. */
export interface StartedRun {
  readonly record: DagRunRecord;
  readonly done: Promise<DagRunRecord>;
}

/**
 * The run use cases (ARCHITECTURE.md section 5, `services`): start, retry, stop, restart and
 * dry-run of DAG runs in this process, child runs, and recovery of runs whose owner died.
 */
export class RunService implements ChildRunner {
  /** Where a dry run's log goes, so its child runs log there too. */
  private dryLog: ((line: string) => void) | undefined;

  constructor(private readonly deps: RunServiceDeps) {}

  private nowIso(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Starts a run of a DAG now, in this process. */
  async start(req: StartRequest): Promise<StartedRun> {
    const loaded = this.deps.dags.load(req.dag, req.baseDir);
    const params = this.resolveParams(loaded.dag, req.params);
    if (req.dryRun) this.dryLog = req.onLog;
    return this.launch(loaded.dag, loaded.localDags, {
      dagRunId: this.checkRunId(req.dagRunId),
      params,
      dryRun: req.dryRun ?? false,
      ...(req.onLog ? { onLog: req.onLog } : {}),
    });
  }

  /**
   * Retries a run as a new run (ARCHITECTURE.md section 6): the original's DAG snapshot and
   * params; succeeded steps keep their result; with `stepName` only that step runs again.
   */
  async retry(
    ref: RunRef,
    opts: { newRunId?: string; stepName?: string } = {},
  ): Promise<StartedRun> {
    const previous = await this.deps.store.getRun(ref);
    if (!isFinalRunStatus(previous.status) && previous.status !== RunStatus.NotStarted) {
      throw new AppError(
        ErrorCode.AlreadyRunning,
        `run ${ref.dagRunId} of DAG "${ref.name}" is still running; stop it or wait before retrying`,
      );
    }
    const snapshot = await this.deps.store.getSnapshot(ref);
    const dag = snapshot.dag as Dag;
    if (opts.stepName !== undefined && !dag.steps.some((s) => s.name === opts.stepName)) {
      throw notFound('step', `${opts.stepName} in DAG "${dag.name}"`);
    }
    return this.launch(dag, snapshot.localDags as Dag[], {
      dagRunId: this.checkRunId(opts.newRunId),
      params: previous.params.map((p) => ({ ...p })),
      nodes: retryNodes(previous.nodes, opts.stepName),
      dryRun: false,
    });
  }

  /** Asks the process running `ref` to stop it (asynchronous: the run ends cancelled). */
  async stop(ref: RunRef): Promise<void> {
    const run = await this.deps.store.getRun(ref);
    if (run.status !== RunStatus.Running) {
      throw new AppError(
        ErrorCode.NotRunning,
        `run ${ref.dagRunId} of DAG "${ref.name}" is not running`,
        { ...ref },
      );
    }
    await this.deps.store.requestStop(ref);
  }

  /**
   * Restarts a running run: asks it to stop, waits until it ended (at most the DAG's
   * maxCleanUpTimeSec plus `waitLimitMs`), waits `restartWaitSec`, then starts a new run from the
   * same DAG snapshot and params.
   */
  async restart(ref: RunRef, waitLimitMs = 60_000): Promise<StartedRun> {
    const snapshot = await this.deps.store.getSnapshot(ref);
    const dag = snapshot.dag as Dag;
    await this.stop(ref);
    const deadline = this.deps.clock.now().getTime() + dag.maxCleanUpTimeSec * 1000 + waitLimitMs;
    let current = await this.deps.store.getRun(ref);
    while (!isFinalRunStatus(current.status)) {
      if (this.deps.clock.now().getTime() > deadline) {
        throw new AppError(
          ErrorCode.Internal,
          `run ${ref.dagRunId} of DAG "${ref.name}" did not stop in time; not restarted`,
        );
      }
      await this.deps.clock.sleep(100);
      current = await this.deps.store.getRun(ref);
    }
    if (dag.restartWaitSec > 0) await this.deps.clock.sleep(dag.restartWaitSec * 1000);
    return this.launch(dag, snapshot.localDags as Dag[], {
      dagRunId: this.deps.ids.newRunId(),
      params: current.params.map((p) => ({ ...p })),
      dryRun: false,
    });
  }

  /** The record of a run, or of the DAG's latest run. */
  status(name: string, dagRunId?: string): Promise<DagRunRecord> {
    return dagRunId ? this.deps.store.getRun({ name, dagRunId }) : this.deps.store.latestRun(name);
  }

  /**
   * Marks runs whose owner process died as failed, with an error saying so, and kills the
   * process groups their steps left behind (issue: crash safety).
   */
  async recoverOrphans(): Promise<DagRunRecord[]> {
    const orphans = await this.deps.store.findOrphanedRuns();
    const now = this.nowIso();
    for (const run of orphans) {
      const who = run.owner ? `pid ${run.owner.pid} on ${run.owner.host}` : 'an unknown process';
      for (const n of [...run.nodes, run.onSuccess, run.onFailure, run.onCancel, run.onExit]) {
        if (!n || n.status !== NodeStatus.Running) continue;
        if (n.pid !== undefined) this.killLeftover(n.pid, n.startedAt);
        n.status = NodeStatus.Failed;
        n.error = `the process running this step (${who}) died`;
        n.finishedAt = now;
        delete n.pid;
      }
      run.status = RunStatus.Failed;
      run.error = `the process that ran this run (${who}) died before it finished; marked failed at ${now}`;
      run.finishedAt = now;
      run.revision++;
      await this.deps.store.saveRun(run);
    }
    return orphans;
  }

  /** SIGKILLs a step's process group, if that pid still names a process started for it. */
  private killLeftover(pgid: number, startedAt: string): void {
    const started = this.deps.processes.processStartTime(pgid);
    if (!started || Date.parse(started) < Date.parse(startedAt) - 5000) return; // gone, or a reused pid
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  // ---- ChildRunner ----------------------------------------------------------------------------

  /** Runs a child DAG (`run:` steps) in this process, stored under its root run. */
  async run(req: ChildRunRequest): Promise<ChildRunResult> {
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
    const started = await this.launch(dag, localDags, {
      dagRunId: req.dagRunId,
      params: this.resolveParams(dag, req.params, false),
      parent: req.parent,
      root: req.root,
      stop: req.abort,
      dryRun: req.dryRun,
      ...(this.dryLog ? { onLog: this.dryLog } : {}),
    });
    const final = await started.done;
    const outputs: Record<string, string> = {};
    for (const n of final.nodes) Object.assign(outputs, n.outputs);
    return { name: dag.name, dagRunId: final.dagRunId, status: final.status, outputs };
  }

  // ---- internals ------------------------------------------------------------------------------

  /**
   * `histRetentionDays` at run start: older finished runs of the DAG go, with their logs and
   * child runs. It runs beside the new run and never fails it; the run log says what happened.
   */
  private applyRetention(dag: Dag, recorder: RunRecorder): void {
    this.deps.store
      .deleteRunsOlderThan(dag.name, dag.histRetentionDays)
      .then((n) => {
        if (n > 0)
          recorder.log(
            `deleted ${n} run(s) older than ${dag.histRetentionDays} days (histRetentionDays)`,
          );
      })
      .catch((e: unknown) => recorder.log(`history clean-up failed: ${(e as Error).message}`));
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
  private resolveParams(
    dag: Dag,
    input: string | undefined,
    allowJson = true,
  ): { name: string; value: string }[] {
    if (input === undefined || input.trim() === '')
      return dag.params.map((p) => ({ name: p.name, value: p.value }));
    const tokens = allowJson ? parseParamsInput(input) : tokenizeParams(input);
    if (typeof tokens === 'string') throw badRequest(`invalid params: ${tokens}`);
    return applyParamOverrides(dag.params, tokens).map((p) => ({ name: p.name, value: p.value }));
  }

  private async launch(
    dag: Dag,
    localDags: readonly Dag[],
    o: {
      dagRunId: string;
      params: { name: string; value: string }[];
      nodes?: DagRunRecord['nodes'];
      parent?: RunRef;
      root?: RunRef;
      stop?: AbortSignal;
      dryRun: boolean;
      onLog?: (line: string) => void;
    },
  ): Promise<StartedRun> {
    const now = this.nowIso();
    const record: DagRunRecord = {
      name: dag.name,
      dagRunId: o.dagRunId,
      root: o.root ?? { name: dag.name, dagRunId: o.dagRunId },
      ...(o.parent ? { parent: o.parent } : {}),
      status: RunStatus.NotStarted,
      createdAt: now,
      queuedAt: '',
      startedAt: '',
      finishedAt: '',
      log: '',
      params: o.params,
      nodes: o.nodes ?? [],
      preconditions: [],
      error: '',
      owner: this.deps.processes.owner,
      queue: dag.queue ?? dag.name,
      revision: 0,
    };
    const recorder = o.dryRun
      ? dryRecorder(o.onLog ?? (() => undefined))
      : this.deps.store.recorderFor(record);
    record.log = recorder.runLogPath;
    const snapshot: RunSnapshotData = { dag, localDags };
    if (!o.dryRun) await this.deps.store.createRun(record, snapshot);
    if (!o.dryRun && !o.parent) this.applyRetention(dag, recorder);

    const stop = new AbortController();
    o.stop?.addEventListener('abort', () => stop.abort(), { once: true });
    const scope = o.parent ? { root: record.root } : {};
    const unwatch = o.dryRun
      ? () => undefined
      : this.deps.store.watchStop({ name: record.name, dagRunId: record.dagRunId }, scope, () =>
          stop.abort(),
        );
    const done = runDag(
      {
        clock: this.deps.clock,
        executors: this.deps.executors,
        commands: this.deps.commands,
        children: this,
        recorder,
        ...(this.deps.events ? { events: this.deps.events } : {}),
        systemEnv: this.deps.systemEnv,
        defaultShell: this.deps.defaultShell,
      },
      { dag, localDags, record: structuredClone(record), stop: stop.signal, dryRun: o.dryRun },
    ).finally(unwatch);
    return { record, done };
  }
}

/**
 * In a dry run nothing is stored (no record, no log files): run log lines and step output go to
 * `onLog`, prefixed with the step name.
 */
const dryRecorder = (onLog: (line: string) => void): RunRecorder => ({
  runLogPath: '',
  save: () => Promise.resolve(),
  log: onLog,
  openStepLogs: (key) => {
    const sink = (): PassThrough => {
      const s = new PassThrough();
      s.on('data', (c: Buffer) => {
        for (const line of c.toString().split('\n')) if (line !== '') onLog(`  [${key}] ${line}`);
      });
      return s;
    };
    return Promise.resolve({
      stdoutPath: '',
      stderrPath: '',
      stdout: sink(),
      stderr: sink(),
      close: () => Promise.resolve(),
    });
  },
  close: () => Promise.resolve(),
});
