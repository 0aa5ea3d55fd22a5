import {
  AppError,
  ErrorCode,
  RunStatus,
  alreadyExists,
  alreadyRunning,
  isFinalRunStatus,
  runStatusLabel,
} from '@trellis/core';
import { newRunRecord, type RunParams } from '@trellis/engine';
import type { Dag, DagRunRecord, RunRef } from '@trellis/spec';
import { queueOf, type QueueInfo } from '../queues/queue-of.js';
import { ACTIVATION_LIMIT_MS, type RunQueues } from '../queues/run-queues.js';
import { AdmissionState, type AdmissionDeps } from './admission-state.js';
import { QueuePass } from './queue-pass.js';
import { refKey } from './run-waiters.js';
import { serial } from './serial.js';

/** What made a run (every path goes through the one admission function). */
export type Trigger = 'start' | 'enqueue' | 'retry' | 'restart' | 'schedule';

/** What admission needs to create a run. */
export interface AdmitRequest {
  readonly dag: Dag;
  readonly localDags: readonly Dag[];
  readonly dagRunId: string;
  readonly params: RunParams;
  readonly trigger: Trigger;
  readonly singleton?: boolean;
  readonly queue?: string;
  /** Node records to start from (retry). */
  readonly nodes?: DagRunRecord['nodes'];
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

/**
 * The one admission function and its ledger (docs/architecture.md, "Admission"): every trigger
 * (API start, enqueue, inline run, retry, restart, cron, CLI) decides here whether a run starts
 * now, waits in its queue, or is refused. It creates the run's record and hands a run that may
 * start to its dispatcher (local, or workers for a `workerSelector`); it executes nothing itself.
 * Every run's end comes back through the dispatchers' one run-update event.
 */
export class Admission {
  readonly #s: AdmissionState;
  readonly #pass: QueuePass;

  constructor(deps: AdmissionDeps, opts: { ledger?: boolean } = {}) {
    this.#s = new AdmissionState(deps);
    this.#pass = new QueuePass(this.#s);
    if (opts.ledger === true) this.#s.ledger = this.#pass.newLedger();
    deps.remote?.onCapacity(() => this.#s.ledger?.pumpAll());
    deps.local.onRunUpdate((r) => this.#onRunUpdate(r));
    deps.remote?.onRunUpdate((r) => this.#onRunUpdate(r));
  }

  /**
   * Decides for one run. A singleton start of a running DAG is 409 already_running; a start
   * finding its queue full (or others waiting) waits in it; an enqueue always waits its turn; a
   * run for workers goes to a worker when one can take it, else waits. Duplicate ids are 409
   * already_exists (from the ledger or the store).
   *
   * One decision, against one kind of ledger: where the queues run, the live ledger (decisions
   * are synchronous against it, so two starts never share the last slot); elsewhere (a CLI
   * `start`, a server without the scheduler role) the queue's ledger as the store knows it,
   * one admission per queue at a time when the queue has a limit. Only the queue process hands
   * runs to workers.
   */
  async admit(req: AdmitRequest): Promise<StartedRun> {
    const s = this.#s;
    const q = queueOf(req.dag, s.customQueues, req.queue);
    const live = s.ledger;
    if (live !== undefined) return this.#decide(req, q, live, true);
    // a queue without a limit has no slot to share: its starts need no turn (a burst of them
    // would otherwise wait on each other's store writes); a singleton's check still takes one
    if (q.capacity === Infinity && req.singleton !== true)
      return this.#decide(req, q, await this.#pass.ledgerOf(q), false);
    return serial(s.admissions, q.name, async () =>
      this.#decide(req, q, await this.#pass.ledgerOf(q), false),
    );
  }

  async #decide(
    req: AdmitRequest,
    q: QueueInfo,
    ledger: RunQueues,
    queueProcess: boolean,
  ): Promise<StartedRun> {
    const { dag } = req;
    const s = this.#s;
    const ref = { name: dag.name, dagRunId: req.dagRunId };
    const remote = s.isRemote(dag);
    if (req.singleton === true) await this.#refuseIfRunning(dag.name);
    if (queueProcess && q.capacity !== Infinity && req.trigger !== 'enqueue')
      await this.#pass.noteForeign(ledger, q, dag);
    // From here on synchronous against the ledger: no other admission runs in between.
    if (ledger.knows(ref)) throw alreadyExists('run', req.dagRunId);
    if (req.singleton === true && ledger.hasActiveOf(q.name, dag.name))
      throw alreadyRunning(dag.name);
    const blocked =
      remote && (!queueProcess || s.deps.remote?.availability(dag.workerSelector) !== null);
    if (req.trigger === 'enqueue' || blocked || !ledger.tryOccupy(q, ref))
      return this.#park(req, q);
    try {
      if (remote) return await this.#dispatchNow(req, q);
      return await this.#startLocal(req);
    } catch (e) {
      ledger.release(ref); // the slot this admission took
      throw e;
    }
  }

  /** A new record of an admitted run (not stored). */
  #record(req: AdmitRequest, status: RunStatus, q?: QueueInfo): DagRunRecord {
    const { store, processes } = this.#s.deps;
    const now = this.#s.nowIso();
    return newRunRecord(req.dag, {
      dagRunId: req.dagRunId,
      params: req.params,
      nodes: req.nodes,
      status,
      now,
      log: store.runLogPath({ name: req.dag.name, dagRunId: req.dagRunId }, req.dag.logDir),
      // a queued run has no owner yet: the process (or worker) that starts it becomes it
      ...(status === RunStatus.Queued ? {} : { owner: processes.owner }),
      ...(q ? { queue: q.name, queuedAt: now } : {}),
    });
  }

  /**
   * Creates the run running (the engine starts it at once, so the creation is the first durable
   * state and nobody ever sees a run that exists but is "not started") and hands it to the local
   * dispatcher; resolves once it is running on disk.
   */
  async #startLocal(req: AdmitRequest): Promise<StartedRun> {
    const record = this.#record(req, RunStatus.Running);
    await this.#s.deps.store.createRun(record, { dag: req.dag, localDags: req.localDags });
    const done = this.#s.waiters.waitFor(record);
    await this.#s.deps.local.dispatch({ record, dag: req.dag, localDags: req.localDags });
    return { record, queued: false, done };
  }

  /** spec: a singleton start of a DAG that already runs is 409 already_running. */
  async #refuseIfRunning(dagName: string): Promise<void> {
    const running = await this.#s.deps.store.listRuns({
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
  async #park(req: AdmitRequest, q: QueueInfo): Promise<StartedRun> {
    const s = this.#s;
    const record = this.#record(req, RunStatus.Queued, q);
    const ref = { name: record.name, dagRunId: record.dagRunId };
    const waiting = { ref, queuedAt: record.queuedAt, selector: req.dag.workerSelector };
    const reserved = s.ledger;
    reserved?.reserve(q, waiting);
    try {
      await s.deps.store.createRun(record, { dag: req.dag, localDags: req.localDags });
    } catch (e) {
      reserved?.release(ref);
      throw e;
    }
    // Only the queue process runs it; elsewhere nobody here learns when it ends.
    const live = s.ledger;
    if (!live) return { record, queued: true, done: new Promise<DagRunRecord>(() => undefined) };
    const done = s.waiters.waitFor(record);
    s.parked.set(refKey(ref), { record, dag: req.dag, localDags: req.localDags });
    // This process took over the queues while the record was written (its first pass did not
    // see it): the run joins the live ledger now, in FIFO order, before anything admitted later.
    if (live === reserved) live.ready(ref);
    else live.enqueue(q, waiting);
    return { record, queued: true, done };
  }

  /**
   * A run for workers with a free slot and a worker ready: queued until a worker reports it
   * running (the activation limit applies). When the hand-over fails, it waits in its queue.
   */
  async #dispatchNow(req: AdmitRequest, q: QueueInfo): Promise<StartedRun> {
    const s = this.#s;
    const record = this.#record(req, RunStatus.Queued, q);
    await s.deps.store.createRun(record, { dag: req.dag, localDags: req.localDags });
    const ref = { name: record.name, dagRunId: record.dagRunId };
    const done = s.waiters.waitFor(record);
    s.ledger?.occupy(q, ref, s.deps.clock.now().getTime() + ACTIVATION_LIMIT_MS);
    s.foreign.add(refKey(ref));
    try {
      await s.dispatcherFor(req.dag).dispatch({ record, dag: req.dag, localDags: req.localDags });
    } catch (e) {
      s.warn(
        `run ${record.dagRunId} of DAG "${record.name}" waits in its queue: handing it to a worker failed: ${(e as Error).message}`,
      );
      s.foreign.delete(refKey(ref));
      s.ledger?.release(ref);
      s.ledger?.enqueue(q, { ref, queuedAt: record.queuedAt, selector: req.dag.workerSelector });
    }
    return { record, queued: true, done };
  }

  /** Where a child run's records go (children sent to workers are waited for there). */
  onChildUpdate: (record: DagRunRecord) => void = () => undefined;

  /**
   * The one run-update event (local and remote runs alike): a running run keeps its slot without
   * a deadline; a final one frees its slot at once and resolves its waiters.
   */
  #onRunUpdate(record: DagRunRecord): void {
    if (record.parent !== undefined) {
      this.onChildUpdate(record);
      return;
    }
    const ref = { name: record.name, dagRunId: record.dagRunId };
    if (record.status === RunStatus.Running) this.#s.ledger?.markRunning(ref);
    else if (isFinalRunStatus(record.status)) {
      this.#s.foreign.delete(refKey(ref));
      this.#s.ledger?.release(ref);
      this.#s.waiters.settle(record);
    }
  }

  /** Takes a queued run off its queue: it ends cancelled and stays in history. */
  dequeue(ref: RunRef): Promise<void> {
    const s = this.#s;
    return s.leave(ref, async () => {
      const run = await s.deps.store.getRun(ref);
      const leaving = s.isActivating(ref);
      if (run.status !== RunStatus.Queued || leaving) {
        throw new AppError(
          ErrorCode.NotFound,
          `run ${ref.dagRunId} of DAG "${ref.name}" is not queued (${leaving ? 'it is starting' : `its status is ${runStatusLabel[run.status]}`})`,
          { ...ref },
        );
      }
      const expectRevision = run.revision;
      run.status = RunStatus.Cancelled;
      run.finishedAt = s.nowIso();
      run.error = 'dequeued before it started';
      run.revision++;
      if (!(await s.deps.store.saveRunIf(run, expectRevision))) {
        throw new AppError(
          ErrorCode.NotFound,
          `run ${ref.dagRunId} of DAG "${ref.name}" is not queued (it changed meanwhile, probably started)`,
          { ...ref },
        );
      }
      s.ledger?.release(ref);
      s.parked.delete(refKey(ref));
      s.waiters.settle(run);
    });
  }

  /**
   * Where a child run (`run:` step) executes. Children take no queue slot (they run inside their
   * parent's), so admission decides only between this process and the workers of the child's
   * selector: workers when a worker dispatcher is configured and the selector is not empty (a
   * dry run never leaves this process).
   */
  placeChild(selector: Readonly<Record<string, string>>, dryRun: boolean): 'here' | 'workers' {
    const toWorkers =
      this.#s.deps.remote !== undefined && !dryRun && Object.keys(selector).length > 0;
    return toWorkers ? 'workers' : 'here';
  }

  /** Records of runs found dead (lost-run recovery) end like any other run. */
  ended(records: readonly DagRunRecord[]): void {
    for (const r of records) this.#onRunUpdate(r);
  }

  /**
   * One pass of the queue process (every second, from the scheduler's queue processor).
   * The first pass of a process builds its ledger from what the store knows, and admission
   * switches to it once it holds that.
   */
  async reconcile(): Promise<void> {
    if (this.#s.ledger) {
      await this.#pass.reconcile(this.#s.ledger);
      return;
    }
    const ledger = this.#pass.newLedger();
    await this.#pass.reconcile(ledger);
    this.#s.ledger = ledger;
  }

  /** Reconciles only where a ledger is kept already (tests, and the queue process). */
  async reconcileIfLedger(): Promise<void> {
    if (this.#s.ledger) await this.#pass.reconcile(this.#s.ledger);
  }

  /** Shutting down (or stepping down): queued runs stay queued for the next queue process. */
  releaseQueues(): void {
    this.#s.ledger = undefined;
  }
}
