import { PassThrough } from 'node:stream';
import {
  AppError,
  ErrorCode,
  NodeStatus,
  RUN_ID_PATTERN,
  RunStatus,
  alreadyRunning,
  badRequest,
  runStatusLabel,
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
  type RunHook,
  type RunRecorder,
} from '@trellis/engine';
import {
  parseDagFile,
  tokenizeParams,
  type Dag,
  type DagRunRecord,
  type RunRef,
} from '@trellis/spec';
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
  /** Run hooks of the engine (tracing, DAG-level container, mail). @default [] */
  readonly runHooks?: readonly RunHook[];
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
}

/** A started run: its record as created, and the promise of its final record. */
export interface StartedRun {
  readonly record: DagRunRecord;
  readonly done: Promise<DagRunRecord>;
}

/** A launched run and when it is running on disk. */
interface LaunchedRun extends StartedRun {
  readonly started: Promise<void>;
}

/** Waits until a launched run is running on disk. */
const whenStarted = async (l: LaunchedRun): Promise<StartedRun> => {
  await l.started;
  return { record: l.record, done: l.done };
};

/**
 * The run use cases (ARCHITECTURE.md section 5, `services`): start, retry, stop, restart and
 * dry-run of DAG runs in this process, child runs, and recovery of runs whose owner died.
 */
export class RunService implements ChildRunner {
  /** Where a dry run's log goes, so its child runs log there too. */
  private dryLog: ((line: string) => void) | undefined;
  /** Tail of the admission chain per DAG name. */
  private readonly admissions = new Map<string, Promise<void>>();
  /** Runs executing in this process: their stop controllers and completion. */
  private readonly active = new Map<string, { stop: AbortController; done: Promise<unknown> }>();

  /** How many runs this process executes right now (children included). */
  get activeCount(): number {
    return this.active.size;
  }

  /**
   * Graceful shutdown: waits up to `graceMs` for the runs of this process to finish, then stops
   * the rest (their steps get their stop signals; the runs end cancelled) and waits for them.
   */
  async drain(graceMs: number): Promise<void> {
    const all = (): Promise<unknown> =>
      Promise.allSettled([...this.active.values()].map((a) => a.done));
    if (this.active.size === 0) return;
    const timer = new AbortController();
    await Promise.race([
      all(),
      this.deps.clock.sleep(graceMs, timer.signal).catch(() => undefined),
    ]);
    timer.abort();
    for (const a of this.active.values()) a.stop.abort();
    await all();
  }

  constructor(private readonly deps: RunServiceDeps) {}

  private nowIso(): string {
    return this.deps.clock.now().toISOString();
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
    if (req.dryRun) {
      this.dryLog = req.onLog;
      const dry = await this.launch(dag, localDags, {
        dagRunId,
        params,
        dryRun: true,
        ...(req.onLog ? { onLog: req.onLog } : {}),
      });
      return whenStarted(dry);
    }
    const singleton = req.singleton ?? false;
    if (!singleton && dag.maxActiveRuns === -1) {
      return whenStarted(await this.launch(dag, localDags, { dagRunId, params, dryRun: false }));
    }
    const launched = await this.admit(dag.name, async () => {
      await this.checkCapacity(dag, singleton);
      return this.launch(dag, localDags, { dagRunId, params, dryRun: false });
    });
    return whenStarted(launched);
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
    if (req.spec.trim() === '')
      throw badRequest('spec is required: send the DAG as YAML text in "spec"');
    const file = parseDagFile(req.spec, {
      ...(req.name !== undefined ? { name: req.name } : {}),
      cwd: this.deps.dags.dagsDir,
      dagExists: (t) => this.deps.dags.locate(t) !== undefined,
    });
    if (!file.main.dag.name)
      throw badRequest('the DAG needs a name: give "name" in the request or name: in the spec');
    if (!file.valid) {
      throw new AppError(
        ErrorCode.BadRequest,
        `the spec has ${file.errors.length} problem(s): ${file.errors.join('; ')}`,
        { errors: [...file.errors] },
      );
    }
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
  async stopAll(dagName: string): Promise<string[]> {
    const running = await this.deps.store.listRuns({ name: dagName, status: RunStatus.Running });
    const errors: string[] = [];
    for (const r of running) {
      try {
        await this.deps.store.requestStop({ name: dagName, dagRunId: r.dagRunId });
      } catch (e) {
        errors.push(`run ${r.dagRunId}: ${(e as Error).message}`);
      }
    }
    return errors;
  }

  /** Takes a queued run off its queue: it ends cancelled and stays in history. */
  async dequeue(ref: RunRef): Promise<void> {
    const run = await this.deps.store.getRun(ref);
    if (run.status !== RunStatus.Queued) {
      throw new AppError(
        ErrorCode.NotFound,
        `run ${ref.dagRunId} of DAG "${ref.name}" is not queued (its status is ${runStatusLabel[run.status]})`,
        { ...ref },
      );
    }
    run.status = RunStatus.Cancelled;
    run.finishedAt = this.nowIso();
    run.error = 'dequeued before it started';
    run.revision++;
    await this.deps.store.saveRun(run);
  }

  /**
   * Sets one step's status in a run that is not running (spec: step status update), e.g. to
   * mark a failed step done before a retry. The run's own status is left as it is.
   */
  async setStepStatus(
    ref: RunRef,
    stepName: string,
    status: NodeStatus,
    root?: RunRef,
  ): Promise<void> {
    const run = await this.deps.store.getRun(ref, root ? { root } : {});
    const node = [...run.nodes, run.onSuccess, run.onFailure, run.onCancel, run.onExit].find(
      (n) => n?.step.name === stepName,
    );
    if (!node) throw notFound('step', `${stepName} in run ${ref.dagRunId} of DAG "${ref.name}"`);
    if (run.status === RunStatus.Running) {
      throw badRequest(
        `run ${ref.dagRunId} of DAG "${ref.name}" is still running: stop it or wait before changing a step's status`,
      );
    }
    node.status = status;
    run.revision++;
    await this.deps.store.saveRun(run);
  }

  /** Serialises admission per DAG, so two concurrent starts cannot both see a free slot. */
  private admit<T>(dagName: string, f: () => Promise<T>): Promise<T> {
    const prev = this.admissions.get(dagName) ?? Promise.resolve();
    const next = prev.then(f, f);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.admissions.set(dagName, tail);
    void tail.then(() => {
      if (this.admissions.get(dagName) === tail) this.admissions.delete(dagName);
    });
    return next;
  }

  /** spec: a singleton start of a running DAG is 409 already_running; maxActiveRuns (-1 = no limit) caps concurrent runs. */
  private async checkCapacity(dag: Dag, singleton: boolean): Promise<void> {
    if (!singleton && dag.maxActiveRuns === -1) return;
    const running = await this.deps.store.listRuns({ name: dag.name, status: RunStatus.Running });
    if (singleton && running.length > 0) throw alreadyRunning(dag.name);
    if (dag.maxActiveRuns !== -1 && running.length >= dag.maxActiveRuns) {
      throw new AppError(
        ErrorCode.AlreadyRunning,
        `DAG "${dag.name}" already runs ${running.length} run(s), its maxActiveRuns (${dag.maxActiveRuns}): stop one, wait, or raise maxActiveRuns`,
        { dagName: dag.name, running: running.length, maxActiveRuns: dag.maxActiveRuns },
      );
    }
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
    // spec: retry needs that no other instance of the DAG runs
    const others = await this.deps.store.listRuns({
      name: ref.name,
      status: RunStatus.Running,
      limit: 1,
    });
    if (others[0]) {
      throw new AppError(
        ErrorCode.AlreadyRunning,
        `DAG "${ref.name}" is running (run ${others[0].dagRunId}); retry when it ended`,
      );
    }
    const snapshot = await this.deps.store.getSnapshot(ref);
    const dag = snapshot.dag as Dag;
    if (opts.stepName !== undefined && !dag.steps.some((s) => s.name === opts.stepName)) {
      throw notFound('step', `${opts.stepName} in DAG "${dag.name}"`);
    }
    return whenStarted(
      await this.launch(dag, snapshot.localDags as Dag[], {
        dagRunId: this.checkRunId(opts.newRunId),
        params: previous.params.map((p) => ({ ...p })),
        nodes: retryNodes(previous.nodes, opts.stepName),
        dryRun: false,
      }),
    );
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
    return whenStarted(
      await this.launch(dag, snapshot.localDags as Dag[], {
        dagRunId: this.deps.ids.newRunId(),
        params: current.params.map((p) => ({ ...p })),
        dryRun: false,
      }),
    );
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
      ...(req.traceparent !== undefined ? { traceparent: req.traceparent } : {}),
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
      traceparent?: string;
      root?: RunRef;
      stop?: AbortSignal;
      dryRun: boolean;
      onLog?: (line: string) => void;
    },
  ): Promise<LaunchedRun> {
    const now = this.nowIso();
    const record: DagRunRecord = {
      name: dag.name,
      dagRunId: o.dagRunId,
      root: o.root ?? { name: dag.name, dagRunId: o.dagRunId },
      ...(o.parent ? { parent: o.parent } : {}),
      // Created running (the engine starts it at once), so the creation is the first durable
      // state and nobody ever sees a run that exists but is "not started".
      status: o.dryRun ? RunStatus.NotStarted : RunStatus.Running,
      createdAt: now,
      queuedAt: '',
      startedAt: o.dryRun ? '' : now,
      finishedAt: '',
      log: '',
      params: o.params,
      nodes: o.nodes ?? [],
      preconditions: [],
      error: '',
      owner: this.deps.processes.owner,
      queue: dag.queue ?? dag.name,
      revision: 0,
      ...(o.traceparent !== undefined ? { traceparent: o.traceparent } : {}),
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
    const key = `${record.root.dagRunId}/${record.dagRunId}`;
    let markStarted: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (markStarted = resolve));
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
        ...(this.deps.runHooks ? { runHooks: this.deps.runHooks } : {}),
      },
      {
        dag,
        localDags,
        record: structuredClone(record),
        stop: stop.signal,
        dryRun: o.dryRun,
        onStarted: () => markStarted(),
      },
    ).finally(() => {
      unwatch();
      this.active.delete(key);
    });
    this.active.set(key, { stop, done });
    // Callers get the run once it is running on disk (a stop right after a start works), or
    // once it ended without starting (an internal failure before its first save). Awaited by the
    // callers outside the admission lock, so concurrent starts do not queue behind each other.
    const started = Promise.race([
      running,
      done.then(
        () => undefined,
        () => undefined,
      ),
    ]);
    return { record, done, started };
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
