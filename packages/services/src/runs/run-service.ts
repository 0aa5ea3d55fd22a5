import { PassThrough } from 'node:stream';
import {
  AppError,
  ErrorCode,
  alreadyExists,
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
  childRunResult,
  parseParamsInput,
  newNodeRecord,
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
  type RunOwner,
  type RunRef,
} from '@trellis/spec';
import type { FsDagCatalog } from '../dags/fs-dag-catalog.js';
import { queueOf, type CustomQueue, type QueueInfo } from '../queues/queue-of.js';
import {
  ACTIVATION_LIMIT_MS,
  RunQueues,
  type Activation,
  type WaitingRun,
} from '../queues/run-queues.js';
import type { RunDispatcher } from './dispatcher-port.js';
import { RemoteChildRuns, effectiveSelector } from './remote-child-runs.js';
import { retryNodes } from './retry-plan.js';
import type { ProcessProbe, RunStorePort } from './run-store-port.js';

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
  /** Custom queues declared in config.yaml. @default [] */
  readonly queues?: readonly CustomQueue[];
  /**
   * Keep the admission ledger from the start (tests; the queue process gets it from
   * {@link RunService.processQueues}). Without a ledger (a CLI `start`), admission counts from
   * the store and leaves queued runs to the queue process. @default false
   */
  readonly processQueues?: boolean;
  /** Worker dispatch for runs whose DAG has a workerSelector (distributed mode). */
  readonly dispatcher?: RunDispatcher;
  /** Reports what no caller waits for (a queued run that could not start). */
  readonly warn?: (message: string) => void;
  /** Run hooks of the engine (tracing, DAG-level container, mail). @default [] */
  readonly runHooks?: readonly RunHook[];
}

/** What made a run (every path goes through the one admission function). */
export type Trigger = 'start' | 'enqueue' | 'retry' | 'restart' | 'schedule';

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
 * An admitted run: its record as created, whether it waits in a queue, and the promise of its
 * final record (for a queued run: once it ran in this process or on a worker).
 */
export interface StartedRun {
  readonly record: DagRunRecord;
  readonly queued: boolean;
  readonly done: Promise<DagRunRecord>;
}

/** A launched run and when it is running on disk. */
interface LaunchedRun {
  readonly record: DagRunRecord;
  readonly done: Promise<DagRunRecord>;
  readonly started: Promise<void>;
}

/** Waits until a launched run is running on disk. */
const whenStarted = async (l: LaunchedRun): Promise<StartedRun> => {
  await l.started;
  return { record: l.record, queued: false, done: l.done };
};

/** What admission needs to create a run. */
interface AdmitRequest {
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  readonly dagRunId: string;
  readonly params: { name: string; value: string }[];
  readonly trigger: Trigger;
  readonly singleton?: boolean;
  readonly queue?: string;
  /** Node records to start from (retry). */
  readonly nodes?: DagRunRecord['nodes'];
}

const refKey = (r: RunRef): string => `${r.name}/${r.dagRunId}`;

/** How often a run start applies its DAG's `histRetentionDays` (per DAG, per process). */
const RETENTION_EVERY_MS = 60_000;

/**
 * The run use cases (ARCHITECTURE.md section 5, `services`): start, retry, stop, restart and
 * dry-run of DAG runs in this process, child runs, and recovery of runs whose owner died.
 */
export class RunService implements ChildRunner {
  /** Where a dry run's log goes, so its child runs log there too. */
  private dryLog: ((line: string) => void) | undefined;
  /** Tail of the admission chain per queue (processes that do not run the queues). */
  private readonly admissions = new Map<string, Promise<unknown>>();
  /** Runs executing in this process: their stop controllers and completion. */
  private readonly active = new Map<string, { stop: AbortController; done: Promise<unknown> }>();
  /** The admission ledger, in the process that runs the queues. */
  private ledger: RunQueues | undefined;
  private readonly customQueues: ReadonlyMap<string, CustomQueue>;
  /** Callers waiting for queued runs to end, by run key. */
  private readonly waiters = new Map<string, ((r: DagRunRecord) => void)[]>();
  /** Runs another process (or a worker) executes that hold a slot in the ledger, by run key. */
  private readonly foreign = new Set<string>();
  /** Runs this process queued, as created, so their activation need not read them back. */
  private readonly parked = new Map<
    string,
    { record: DagRunRecord; dag: Dag; localDags: readonly Dag[] }
  >();
  /** When this process last applied `histRetentionDays` to a DAG at a run start (ms). */
  private readonly retainedAt = new Map<string, number>();
  /** Serialises activation and dequeue of one queued run. */
  private readonly leaving = new Map<string, Promise<unknown>>();
  /** Child runs sent to workers by a selector (only with a dispatcher). */
  private readonly remoteChildren: RemoteChildRuns | undefined;

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

  constructor(private readonly deps: RunServiceDeps) {
    this.customQueues = new Map((deps.queues ?? []).map((q) => [q.name, q]));
    if (deps.processQueues === true) this.ledger = this.newLedger();
    deps.dispatcher?.onCapacity(() => this.ledger?.pumpAll());
    this.remoteChildren = deps.dispatcher
      ? new RemoteChildRuns({
          store: deps.store,
          dispatcher: deps.dispatcher,
          clock: deps.clock,
          warn: (m) => this.warn(m),
        })
      : undefined;
  }

  private newLedger(): RunQueues {
    return new RunQueues({
      nowMs: () => this.deps.clock.now().getTime(),
      activate: (w) => this.activateWaiting(w),
      blockedBy: (sel) => this.deps.dispatcher?.availability(sel) ?? null,
      warn: (m) => this.warn(m),
    });
  }

  private warn(message: string): void {
    (this.deps.warn ?? (() => undefined))(message);
  }

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
    return this.admit({
      dag,
      localDags,
      dagRunId,
      params,
      trigger: req.trigger ?? 'start',
      ...(req.singleton !== undefined ? { singleton: req.singleton } : {}),
      ...(req.queue !== undefined ? { queue: req.queue } : {}),
    });
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
  dequeue(ref: RunRef): Promise<void> {
    return this.leave(ref, async () => {
      const run = await this.deps.store.getRun(ref);
      const leaving = this.ledger?.isActivating(refKey(ref)) === true;
      if (run.status !== RunStatus.Queued || leaving) {
        throw new AppError(
          ErrorCode.NotFound,
          `run ${ref.dagRunId} of DAG "${ref.name}" is not queued (${leaving ? 'it is starting' : `its status is ${runStatusLabel[run.status]}`})`,
          { ...ref },
        );
      }
      const expectRevision = run.revision;
      run.status = RunStatus.Cancelled;
      run.finishedAt = this.nowIso();
      run.error = 'dequeued before it started';
      run.revision++;
      if (!(await this.deps.store.saveRunIf(run, expectRevision))) {
        throw new AppError(
          ErrorCode.NotFound,
          `run ${ref.dagRunId} of DAG "${ref.name}" is not queued (it changed meanwhile, probably started)`,
          { ...ref },
        );
      }
      this.ledger?.release(ref);
      this.parked.delete(refKey(ref));
      this.settle(run);
    });
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

  /**
   * The one admission function (ARCHITECTURE.md section 2): every trigger (API start, enqueue,
   * inline run, retry, restart, cron, CLI) decides here whether a run starts now, waits in its
   * queue, or is refused. A singleton start of a running DAG is 409 already_running; a start
   * finding its queue full (or others waiting) waits in it; an enqueue always waits its turn; a
   * run for workers goes to a worker when one can take it, else waits. Duplicate ids are 409
   * already_exists (from the store).
   */
  private async admit(req: AdmitRequest): Promise<StartedRun> {
    const { dag } = req;
    const ref = { name: dag.name, dagRunId: req.dagRunId };
    const q = queueOf(dag, this.customQueues, req.queue);
    const remote = this.isRemote(dag);
    const ledger = this.ledger;
    if (ledger === undefined) {
      // Not the queue process: decide from the store's counts, one admission per queue at a time.
      return this.serial(this.admissions, q.name, async () => {
        if (req.singleton === true) await this.refuseIfRunning(dag.name);
        const startNow = req.trigger !== 'enqueue' && !remote && (await this.storeHasRoom(q));
        return startNow
          ? whenStarted(await this.launch(dag, req.localDags, req))
          : this.park(req, q);
      });
    }
    if (req.singleton === true) await this.refuseIfRunning(dag.name);
    if (q.capacity !== Infinity && req.trigger !== 'enqueue')
      await this.noteForeign(ledger, q, dag);
    // From here on synchronous against the ledger: no other admission runs in between.
    if (ledger.knows(ref)) throw alreadyExists('run', req.dagRunId);
    if (req.singleton === true && ledger.hasActiveOf(q.name, dag.name))
      throw alreadyRunning(dag.name);
    const blocked = remote && this.deps.dispatcher?.availability(dag.workerSelector) !== null;
    if (req.trigger === 'enqueue' || blocked || !ledger.tryOccupy(q, ref)) return this.park(req, q);
    try {
      if (remote) return await this.dispatchNow(req, q);
      return whenStarted(await this.launch(dag, req.localDags, req));
    } catch (e) {
      ledger.release(ref); // the slot this admission took
      throw e;
    }
  }

  /** spec: a singleton start of a DAG that already runs is 409 already_running. */
  private async refuseIfRunning(dagName: string): Promise<void> {
    const running = await this.deps.store.listRuns({
      name: dagName,
      status: RunStatus.Running,
      limit: 1,
    });
    if (running[0]) throw alreadyRunning(dagName);
  }

  /**
   * Creates a run that waits in its queue (status queued, `queuedAt` set). Its place in the queue
   * is reserved before the record is written, so no start or enqueue after it goes first.
   */
  private async park(req: AdmitRequest, q: QueueInfo): Promise<StartedRun> {
    const record = this.queuedRecord(req, q);
    const ref = { name: record.name, dagRunId: record.dagRunId };
    this.ledger?.reserve(q, { ref, queuedAt: record.queuedAt, selector: req.dag.workerSelector });
    try {
      await this.deps.store.createRun(record, { dag: req.dag, localDags: req.localDags });
    } catch (e) {
      this.ledger?.release(ref);
      throw e;
    }
    // Only the queue process runs it; elsewhere nobody here learns when it ends.
    const done = this.ledger ? this.waitFor(record) : new Promise<DagRunRecord>(() => undefined);
    if (this.ledger) {
      this.parked.set(refKey(ref), { record, dag: req.dag, localDags: req.localDags });
      this.ledger.ready(ref);
    }
    return { record, queued: true, done };
  }

  /** The record of a run that waits (or waits for a worker): queued, nobody owns it yet. */
  private queuedRecord(req: AdmitRequest, q: QueueInfo): DagRunRecord {
    const record = this.newRecord(req.dag, {
      ...req,
      status: RunStatus.Queued,
      queue: q.name,
      queuedAt: this.nowIso(),
    });
    delete record.owner;
    return record;
  }

  /**
   * A run for workers with a free slot and a worker ready: queued until a worker reports it
   * running (the activation limit applies). When the hand-over fails, it waits in its queue.
   */
  private async dispatchNow(req: AdmitRequest, q: QueueInfo): Promise<StartedRun> {
    const record = this.queuedRecord(req, q);
    await this.deps.store.createRun(record, { dag: req.dag, localDags: req.localDags });
    const ref = { name: record.name, dagRunId: record.dagRunId };
    const done = this.waitFor(record);
    this.ledger?.occupy(q.name, ref, this.deps.clock.now().getTime() + ACTIVATION_LIMIT_MS);
    this.foreign.add(refKey(ref));
    try {
      await this.deps.dispatcher?.dispatch({ record, dag: req.dag, localDags: req.localDags });
    } catch (e) {
      this.warn(
        `run ${record.dagRunId} of DAG "${record.name}" waits in its queue: handing it to a worker failed: ${(e as Error).message}`,
      );
      this.foreign.delete(refKey(ref));
      this.ledger?.release(ref);
      this.ledger?.enqueue(q, { ref, queuedAt: record.queuedAt, selector: req.dag.workerSelector });
    }
    return { record, queued: true, done };
  }

  /** True when the DAG's runs go to workers (it has a selector and workers are configured). */
  private isRemote(dag: Dag): boolean {
    return this.deps.dispatcher !== undefined && Object.keys(dag.workerSelector).length > 0;
  }

  /** Room in a queue by the store's counts (no run active beyond capacity, none waiting). */
  private async storeHasRoom(q: QueueInfo): Promise<boolean> {
    if (q.capacity === Infinity) return true;
    const [running, queued] = await Promise.all([
      this.deps.store.listRuns({ status: RunStatus.Running }),
      this.deps.store.listRuns({ status: RunStatus.Queued }),
    ]);
    const inQ = (r: { queue?: string; name: string }): boolean => (r.queue || r.name) === q.name;
    return !queued.some(inQ) && running.filter(inQ).length < q.capacity;
  }

  /** Runs `f` after the previous call with the same key in `chains` ended (one at a time). */
  private serial<T>(
    chains: Map<string, Promise<unknown>>,
    key: string,
    f: () => Promise<T>,
  ): Promise<T> {
    const prev = chains.get(key) ?? Promise.resolve();
    const next = prev.then(f, f);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    chains.set(key, tail);
    void tail.then(() => {
      if (chains.get(key) === tail) chains.delete(key);
    });
    return next;
  }

  /** Serialises the ways a queued run leaves its queue (activation, dequeue, activation limit). */
  private leave<T>(ref: RunRef, f: () => Promise<T>): Promise<T> {
    return this.serial(this.leaving, refKey(ref), f);
  }

  /** A promise of the run's final record, resolved when it ends in this process or on a worker. */
  private waitFor(record: DagRunRecord): Promise<DagRunRecord> {
    const key = refKey(record);
    return new Promise((resolve) => {
      const list = this.waiters.get(key) ?? [];
      list.push(resolve);
      this.waiters.set(key, list);
    });
  }

  /** Resolves the waiters of a run that reached a final status. */
  private settle(record: DagRunRecord): void {
    const key = refKey(record);
    const list = this.waiters.get(key);
    if (!list) return;
    this.waiters.delete(key);
    for (const resolve of list) resolve(record);
  }

  /**
   * Hands a queued run its slot (called by the ledger): marks it running and executes it here, or
   * dispatches it to a worker. A run that is no longer queued gives its slot back.
   */
  private activateWaiting(w: WaitingRun): Promise<Activation> {
    const activatedAt = this.nowIso(); // now, in FIFO order: startedAt never runs against it
    const parked = this.parked.get(refKey(w.ref));
    this.parked.delete(refKey(w.ref));
    return this.leave(w.ref, async (): Promise<Activation> => {
      // A run queued here is known as created; the compare-and-swap save below still notices
      // a change another process made meanwhile.
      let record: DagRunRecord;
      try {
        record = parked ? { ...parked.record } : await this.deps.store.getRun(w.ref);
      } catch (e) {
        if (AppError.is(e) && e.code === ErrorCode.NotFound) return { kind: 'gone' };
        throw e;
      }
      if (record.status !== RunStatus.Queued) {
        if (isFinalRunStatus(record.status)) this.settle(record);
        return { kind: 'gone' };
      }
      try {
        const snapshot = parked ?? (await this.deps.store.getSnapshot(w.ref));
        const dag = snapshot.dag as Dag;
        const localDags = snapshot.localDags as Dag[];
        if (this.isRemote(dag)) {
          this.foreign.add(refKey(w.ref));
          await this.deps.dispatcher?.dispatch({ record, dag, localDags });
          return { kind: 'dispatched' };
        }
        const expectRevision = record.revision;
        record.status = RunStatus.Running;
        record.startedAt = activatedAt;
        record.owner = this.deps.processes.owner;
        record.revision++;
        // Changed meanwhile in another process (dequeued there): it is not ours to start.
        if (!(await this.deps.store.saveRunIf(record, expectRevision))) return { kind: 'gone' };
        this.execute(record, dag, localDags, { dryRun: false });
        return { kind: 'running' };
      } catch (e) {
        // Nothing will ever start it: say why on the run instead of retrying it every second.
        this.foreign.delete(refKey(w.ref));
        await this.failQueued(w.ref, `the run could not leave its queue: ${(e as Error).message}`);
        return { kind: 'gone' };
      }
    });
  }

  /** Marks a run that is still queued as failed with `error` (it will never start). */
  private async failQueued(ref: RunRef, error: string): Promise<void> {
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
    this.settle(run);
  }

  /**
   * A remote run's record changed (the coordinator wrote a worker's report): a running run keeps
   * its slot without a deadline; a final one frees its slot at once.
   */
  onRemoteUpdate(record: DagRunRecord): void {
    if (record.parent !== undefined) {
      this.remoteChildren?.onUpdate(record); // a child run sent to workers, waited for here
      return;
    }
    const ref = { name: record.name, dagRunId: record.dagRunId };
    if (record.status === RunStatus.Running) this.ledger?.markRunning(ref);
    else if (isFinalRunStatus(record.status)) {
      this.foreign.delete(refKey(ref));
      this.ledger?.release(ref);
      this.settle(record);
    }
  }

  /**
   * One pass of the queue process (every second from {@link processQueues}): activated runs past
   * the 10 s limit are marked failed; queued runs other processes created join the ledger in
   * FIFO order; runs other processes run are counted, and released when they end.
   */
  async reconcileQueues(): Promise<void> {
    if (this.ledger) await this.reconcileInto(this.ledger);
  }

  private async reconcileInto(ledger: RunQueues): Promise<void> {
    for (const ref of ledger.overdue()) await this.failActivation(ref);
    const [queued, running] = await Promise.all([
      this.deps.store.listRuns({ status: RunStatus.Queued }),
      this.deps.store.listRuns({ status: RunStatus.Running }),
    ]);
    const runningKeys = new Set(running.map(refKey));
    const queuedKeys = new Set(queued.map(refKey));
    // Runs this ledger holds that ended, or left their queue, in another process.
    const gone = [
      ...[...this.foreign].filter((k) => !runningKeys.has(k) && !ledger.isActivating(k)),
      ...ledger
        .waitingRuns()
        .map(refKey)
        .filter((k) => !queuedKeys.has(k)),
    ];
    for (const key of gone) {
      const [name = '', dagRunId = ''] = key.split('/');
      const ref = { name, dagRunId };
      const rec = await this.deps.store.getRun(ref).catch(() => undefined);
      if (
        rec === undefined ||
        (rec.status !== RunStatus.Queued && rec.status !== RunStatus.Running)
      ) {
        this.foreign.delete(key);
        this.parked.delete(key);
        ledger.release(ref);
        if (rec) this.settle(rec);
      }
    }
    this.occupyForeign(ledger, running);
    for (const r of [...queued].reverse()) {
      if (ledger.knows(r)) continue;
      const ref = { name: r.name, dagRunId: r.dagRunId };
      let dag: Dag;
      try {
        dag = (await this.deps.store.getSnapshot(ref)).dag as Dag;
      } catch (e) {
        await this.failQueued(ref, `its DAG snapshot cannot be read: ${(e as Error).message}`);
        continue;
      }
      const q = queueOf(dag, this.customQueues, r.queue || undefined);
      ledger.enqueue(q, { ref, queuedAt: r.queuedAt || r.createdAt, selector: dag.workerSelector });
    }
    ledger.pumpAll();
  }

  /**
   * Counts the runs of a queue that other processes run (a CLI `start`) before a decision, so a
   * start right after one elsewhere does not overrun the cap (the reconcile would see it later).
   */
  private async noteForeign(ledger: RunQueues, q: QueueInfo, dag: Dag): Promise<void> {
    const running = await this.deps.store.listRuns({
      status: RunStatus.Running,
      ...(q.name === dag.name ? { name: dag.name } : {}),
    });
    this.occupyForeign(
      ledger,
      running.filter((r) => (r.queue || r.name) === q.name),
    );
  }

  /**
   * Adds running runs the ledger does not hold: runs of other processes (released when a
   * reconcile finds them ended), and this process's runs started before it ran the queues
   * (released when they end, as every run of this process).
   */
  private occupyForeign(
    ledger: RunQueues,
    running: readonly {
      name: string;
      dagRunId: string;
      queue: string;
      owner?: RunOwner | undefined;
    }[],
  ): void {
    const me = this.deps.processes.owner;
    for (const r of running) {
      if (ledger.knows(r)) continue;
      const ref = { name: r.name, dagRunId: r.dagRunId };
      const mine = r.owner?.pid === me.pid && r.owner.host === me.host;
      if (mine && !this.active.has(`${r.dagRunId}/${r.dagRunId}`)) continue; // already ended
      ledger.occupy(r.queue || r.name, ref);
      if (!mine) this.foreign.add(refKey(r));
    }
  }

  /** spec: an activated run that does not become running within 10 s is taken off and failed. */
  private failActivation(ref: RunRef): Promise<void> {
    return this.leave(ref, async () => {
      this.foreign.delete(refKey(ref));
      const run = await this.deps.store.getRun(ref).catch(() => undefined);
      if (run?.status === RunStatus.Queued) {
        await this.failQueued(
          ref,
          `the run left its queue but did not become running within ${ACTIVATION_LIMIT_MS / 1000} s (no worker took it); taken off the queue`,
        );
        await this.deps.dispatcher?.cancel(ref).catch(() => undefined);
      }
      this.ledger?.release(ref);
    });
  }

  /**
   * The queue process's loop: reconciles every `intervalMs` and detects zombie runs (owner gone)
   * every `zombieEveryMs`, until `signal` aborts. `onTick` reports each completed pass (health).
   */
  async processQueues(
    signal: AbortSignal,
    opts: { intervalMs?: number; zombieEveryMs?: number; onTick?: () => void } = {},
  ): Promise<void> {
    const interval = opts.intervalMs ?? 1000;
    const zombieEvery = opts.zombieEveryMs ?? 10_000;
    let lastZombieCheck = -Infinity;
    while (!signal.aborted) {
      try {
        const now = this.deps.clock.now().getTime();
        if (now - lastZombieCheck >= zombieEvery) {
          lastZombieCheck = now;
          for (const r of await this.recoverOrphans()) this.onRemoteUpdate(r);
        }
        if (this.ledger) await this.reconcileInto(this.ledger);
        else {
          // Admission switches to the ledger once it holds what the store knows.
          const ledger = this.newLedger();
          await this.reconcileInto(ledger);
          this.ledger = ledger;
        }
        opts.onTick?.();
      } catch (e) {
        this.warn(`queue pass failed: ${(e as Error).message}`);
      }
      await this.deps.clock.sleep(interval, signal).catch(() => undefined);
    }
    // Shutting down (or stepping down): queued runs stay queued for the next queue process.
    this.ledger = undefined;
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
    return this.admit({
      dag,
      localDags: snapshot.localDags as Dag[],
      dagRunId: this.checkRunId(opts.newRunId),
      params: previous.params.map((p) => ({ ...p })),
      nodes: retryNodes(previous.nodes, opts.stepName),
      trigger: 'retry',
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
    return this.admit({
      dag,
      localDags: snapshot.localDags as Dag[],
      dagRunId: this.deps.ids.newRunId(),
      params: current.params.map((p) => ({ ...p })),
      trigger: 'restart',
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

  /**
   * Runs a child DAG (`run:` steps), stored under its root run: on workers when a dispatcher is
   * configured and the step's `workerSelector` (or else the child DAG's) is not empty, otherwise
   * in this process.
   */
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
    if (this.remoteChildren && !req.dryRun && Object.keys(selector).length > 0)
      return this.runOnWorkers(this.remoteChildren, req, dag, localDags, selector, opts.onStored);
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
    return childRunResult(dag.name, await started.done);
  }

  /** A child run for workers: stored queued under its root, then dispatched by `selector`. */
  private async runOnWorkers(
    remote: RemoteChildRuns,
    req: ChildRunRequest,
    dag: Dag,
    localDags: readonly Dag[],
    selector: Readonly<Record<string, string>>,
    onStored?: () => void,
  ): Promise<ChildRunResult> {
    const record = this.newRecord(dag, {
      dagRunId: req.dagRunId,
      params: this.resolveParams(dag, req.params, false),
      parent: req.parent,
      root: req.root,
      ...(req.traceparent !== undefined ? { traceparent: req.traceparent } : {}),
      status: RunStatus.Queued,
      queuedAt: this.nowIso(),
    });
    delete record.owner; // the worker that claims it becomes its owner
    const final = await remote.run({ record, dag, localDags, selector }, req.abort, onStored);
    return childRunResult(dag.name, final, { remote: true });
  }

  // ---- internals ------------------------------------------------------------------------------

  /**
   * `histRetentionDays` at run start: older finished runs of the DAG go, with their logs and
   * child runs. It runs beside the new run and never fails it; the run log says what happened.
   */
  private applyRetention(dag: Dag, recorder: RunRecorder): void {
    // Retention counts in days: once a minute per DAG is plenty, and a burst of starts does not
    // scan the DAG's history once per run.
    const now = this.deps.clock.now().getTime();
    if (now - (this.retainedAt.get(dag.name) ?? -Infinity) < RETENTION_EVERY_MS) return;
    this.retainedAt.set(dag.name, now);
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

  /** A new run record (not stored). */
  private newRecord(
    dag: Dag,
    o: {
      dagRunId: string;
      params: { name: string; value: string }[];
      nodes?: DagRunRecord['nodes'] | undefined;
      parent?: RunRef | undefined;
      root?: RunRef | undefined;
      traceparent?: string;
      status: RunStatus;
      queue?: string;
      queuedAt?: string;
    },
  ): DagRunRecord {
    const now = this.nowIso();
    return {
      name: dag.name,
      dagRunId: o.dagRunId,
      root: o.root ?? { name: dag.name, dagRunId: o.dagRunId },
      ...(o.parent ? { parent: o.parent } : {}),
      status: o.status,
      createdAt: now,
      queuedAt: o.queuedAt ?? '',
      startedAt: o.status === RunStatus.Running ? now : '',
      finishedAt: '',
      log: this.deps.store.runLogPath({ name: dag.name, dagRunId: o.dagRunId }),
      params: o.params,
      // complete from the start: the engine need not save it again before its first step
      nodes: o.nodes ?? dag.steps.map(newNodeRecord),
      preconditions: [],
      error: '',
      owner: this.deps.processes.owner,
      queue: o.queue ?? dag.queue ?? dag.name,
      revision: 0,
      ...(o.traceparent !== undefined ? { traceparent: o.traceparent } : {}),
    };
  }

  /** Creates a run and executes it in this process now (admitted starts, child runs, dry runs). */
  private async launch(
    dag: Dag,
    localDags: readonly Dag[],
    o: {
      dagRunId: string;
      params: { name: string; value: string }[];
      nodes?: DagRunRecord['nodes'] | undefined;
      parent?: RunRef;
      traceparent?: string;
      root?: RunRef;
      stop?: AbortSignal;
      dryRun?: boolean;
      onLog?: (line: string) => void;
    },
  ): Promise<LaunchedRun> {
    const dryRun = o.dryRun ?? false;
    // Created running (the engine starts it at once), so the creation is the first durable
    // state and nobody ever sees a run that exists but is "not started".
    const record = this.newRecord(dag, {
      ...o,
      status: dryRun ? RunStatus.NotStarted : RunStatus.Running,
    });
    if (dryRun) record.log = '';
    if (!dryRun) await this.deps.store.createRun(record, { dag, localDags });
    return this.execute(record, dag, localDags, { ...o, dryRun });
  }

  /** Executes a stored (or dry) run in this process with the engine. */
  private execute(
    record: DagRunRecord,
    dag: Dag,
    localDags: readonly Dag[],
    o: { stop?: AbortSignal; dryRun: boolean; onLog?: (line: string) => void },
  ): LaunchedRun {
    const recorder = o.dryRun
      ? dryRecorder(o.onLog ?? (() => undefined))
      : this.deps.store.recorderFor(record);
    if (!o.dryRun && !record.parent) this.applyRetention(dag, recorder);

    const stop = new AbortController();
    o.stop?.addEventListener('abort', () => stop.abort(), { once: true });
    const scope = record.parent ? { root: record.root } : {};
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
    if (!o.dryRun && !record.parent) {
      const ref = { name: record.name, dagRunId: record.dagRunId };
      done.then(
        (final) => {
          this.ledger?.release(ref);
          this.settle(final);
        },
        () => this.ledger?.release(ref),
      );
    }
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
