import {
  AppError,
  ErrorCode,
  RunStatus,
  isFinalRunStatus,
  type RunStatus as Status,
} from '@trellis/core';
import type { Dag, DagRunRecord, RunOwner, RunRef } from '@trellis/spec';
import { queueOf, type QueueInfo } from '../queues/queue-of.js';
import {
  ACTIVATION_LIMIT_MS,
  RunQueues,
  type Activation,
  type WaitingRun,
} from '../queues/run-queues.js';
import type { AdmissionState } from './admission-state.js';
import { refKey } from './run-waiters.js';

/** A running run as the store's index lists it. */
interface RunningSummary {
  readonly name: string;
  readonly dagRunId: string;
  readonly queue: string;
  readonly status?: Status;
  readonly owner?: RunOwner | undefined;
}

/**
 * The queue side of admission in the process that runs the queues: the ledger's activation of
 * waiting runs, and the pass (every second, from the scheduler's queue processor) that fails
 * activations past the 10 s limit, adopts runs other processes queued, and counts runs other
 * processes execute until they end.
 */
export class QueuePass {
  constructor(private readonly s: AdmissionState) {}

  newLedger(): RunQueues {
    return new RunQueues({
      nowMs: () => this.s.deps.clock.now().getTime(),
      activate: (w) => this.#activateWaiting(w),
      blockedBy: (sel) => this.s.deps.remote?.availability(sel) ?? null,
      warn: (m) => this.s.warn(m),
    });
  }

  /**
   * The ledger of queue `q` as the store knows it now, for a process that does not run the
   * queues: its running runs hold slots, its queued runs wait in FIFO order. It only decides (it
   * never hands slots on). A queue without a limit needs no counting.
   */
  async ledgerOf(q: QueueInfo): Promise<RunQueues> {
    const ledger = new RunQueues({
      nowMs: () => this.s.deps.clock.now().getTime(),
      activate: () => Promise.resolve({ kind: 'gone' }),
      blockedBy: () => null,
      warn: (m) => this.s.warn(m),
      activates: false,
    });
    if (q.capacity === Infinity) return ledger;
    const { store } = this.s.deps;
    const [running, queued] = await Promise.all([
      store.listRuns({ status: RunStatus.Running }),
      store.listRuns({ status: RunStatus.Queued }),
    ]);
    const inQ = (r: { queue?: string; name: string }): boolean => (r.queue || r.name) === q.name;
    for (const r of running.filter(inQ)) ledger.occupy(q, { name: r.name, dagRunId: r.dagRunId });
    for (const r of queued.filter(inQ)) {
      const ref = { name: r.name, dagRunId: r.dagRunId };
      ledger.enqueue(q, { ref, queuedAt: r.queuedAt || r.createdAt, selector: {} });
    }
    return ledger;
  }

  /**
   * Hands a queued run its slot (called by the ledger): marks it running and executes it here, or
   * dispatches it to a worker. A run that is no longer queued gives its slot back.
   */
  #activateWaiting(w: WaitingRun): Promise<Activation> {
    const activatedAt = this.s.nowIso(); // now, in FIFO order: startedAt never runs against it
    const parked = this.s.parked.get(refKey(w.ref));
    this.s.parked.delete(refKey(w.ref));
    return this.s.leave(w.ref, async (): Promise<Activation> => {
      // A run queued here is known as created; the compare-and-swap save below still notices
      // a change another process made meanwhile.
      let record: DagRunRecord;
      try {
        record = parked ? { ...parked.record } : await this.s.deps.store.getRun(w.ref);
      } catch (e) {
        if (AppError.is(e) && e.code === ErrorCode.NotFound) return { kind: 'gone' };
        throw e;
      }
      if (record.status !== RunStatus.Queued) {
        if (isFinalRunStatus(record.status)) this.s.waiters.settle(record);
        return { kind: 'gone' };
      }
      try {
        return await this.#handOn(w, record, activatedAt, parked);
      } catch (e) {
        // Nothing will ever start it: say why on the run instead of retrying it every second.
        this.s.foreign.delete(refKey(w.ref));
        await this.s.failQueued(
          w.ref,
          `the run could not leave its queue: ${(e as Error).message}`,
        );
        return { kind: 'gone' };
      }
    });
  }

  async #handOn(
    w: WaitingRun,
    record: DagRunRecord,
    activatedAt: string,
    parked: { dag: Dag; localDags: readonly Dag[] } | undefined,
  ): Promise<Activation> {
    const { store, processes } = this.s.deps;
    const snapshot = parked ?? (await store.getSnapshot(w.ref));
    const dag = snapshot.dag as Dag;
    const localDags = snapshot.localDags as Dag[];
    if (this.s.isRemote(dag)) {
      this.s.foreign.add(refKey(w.ref));
      await this.s.dispatcherFor(dag).dispatch({ record, dag, localDags });
      return { kind: 'dispatched' };
    }
    const expectRevision = record.revision;
    record.status = RunStatus.Running;
    record.startedAt = activatedAt;
    record.owner = processes.owner;
    record.revision++;
    // Changed meanwhile in another process (dequeued there): it is not ours to start.
    if (!(await store.saveRunIf(record, expectRevision))) return { kind: 'gone' };
    this.s.deps.local.dispatch({ record, dag, localDags }).catch((e: unknown) => {
      this.s.warn(
        `run ${record.dagRunId} of DAG "${record.name}" did not start: ${(e as Error).message}`,
      );
    });
    return { kind: 'running' };
  }

  /** One pass over `ledger` against the store (see the class comment). */
  async reconcile(ledger: RunQueues): Promise<void> {
    for (const ref of ledger.overdue()) await this.#failActivation(ref);
    const { store } = this.s.deps;
    const [queued, running] = await Promise.all([
      store.listRuns({ status: RunStatus.Queued }),
      store.listRuns({ status: RunStatus.Running }),
    ]);
    await this.#releaseGone(ledger, new Set(running.map(refKey)), new Set(queued.map(refKey)));
    await this.occupyForeign(ledger, running);
    for (const r of [...queued].reverse()) {
      if (ledger.knows(r)) continue;
      const ref = { name: r.name, dagRunId: r.dagRunId };
      let dag: Dag;
      try {
        dag = (await store.getSnapshot(ref)).dag as Dag;
      } catch (e) {
        await this.s.failQueued(ref, `its DAG snapshot cannot be read: ${(e as Error).message}`);
        continue;
      }
      const q = queueOf(dag, this.s.customQueues, r.queue || undefined);
      ledger.enqueue(q, { ref, queuedAt: r.queuedAt || r.createdAt, selector: dag.workerSelector });
    }
    ledger.pumpAll();
  }

  /** Runs this ledger holds that ended, or left their queue, in another process. */
  async #releaseGone(
    ledger: RunQueues,
    runningKeys: ReadonlySet<string>,
    queuedKeys: ReadonlySet<string>,
  ): Promise<void> {
    const gone = [
      ...[...this.s.foreign].filter((k) => !runningKeys.has(k) && !ledger.isActivating(k)),
      ...ledger
        .waitingRuns()
        .map(refKey)
        .filter((k) => !queuedKeys.has(k)),
    ];
    for (const key of gone) {
      const [name = '', dagRunId = ''] = key.split('/');
      const ref = { name, dagRunId };
      const rec = await this.s.deps.store.getRun(ref).catch(() => undefined);
      if (
        rec === undefined ||
        (rec.status !== RunStatus.Queued && rec.status !== RunStatus.Running)
      ) {
        this.s.forget(ref);
        if (rec) this.s.waiters.settle(rec);
      }
    }
  }

  /**
   * Counts the runs of a queue that other processes run (a CLI `start`) before a decision, so a
   * start right after one elsewhere does not overrun the cap (the reconcile would see it later).
   */
  async noteForeign(ledger: RunQueues, q: QueueInfo, dag: Dag): Promise<void> {
    const running = await this.s.deps.store.listRuns({
      status: RunStatus.Running,
      ...(q.name === dag.name ? { name: dag.name } : {}),
    });
    await this.occupyForeign(
      ledger,
      running.filter((r) => (r.queue || r.name) === q.name),
      q,
    );
  }

  /**
   * Adds running runs the ledger does not hold: runs of other processes (released when a
   * reconcile finds them ended), and this process's runs started before it ran the queues
   * (released when they end, as every run of this process). Each run's queue is `q` when the
   * caller knows it, else the one its DAG snapshot and the config declare (never a guess: a queue
   * first met through an adopted run gets its real capacity).
   */
  async occupyForeign(
    ledger: RunQueues,
    running: readonly RunningSummary[],
    q?: QueueInfo,
  ): Promise<void> {
    const me = this.s.deps.processes.owner;
    for (const r of running) {
      if (ledger.knows(r)) continue;
      const ref = { name: r.name, dagRunId: r.dagRunId };
      const mine = r.owner?.pid === me.pid && r.owner.host === me.host;
      if (mine && !this.s.deps.local.isRunning({ ...ref, root: ref })) continue; // already ended
      const info = q ?? (await this.#queueOfRunning(ledger, r));
      if (ledger.knows(r)) continue; // counted while its snapshot was read
      ledger.occupy(info, ref);
      if (!mine) this.s.foreign.add(refKey(r));
    }
  }

  /** The queue of a running run: declared in config, else by its DAG snapshot. */
  async #queueOfRunning(ledger: RunQueues, r: RunningSummary): Promise<QueueInfo> {
    const name = r.queue || r.name;
    const declared = this.s.customQueues.get(name);
    if (declared) return { name, type: 'custom', capacity: declared.maxConcurrency };
    const ref = { name: r.name, dagRunId: r.dagRunId };
    try {
      const dag = (await this.s.deps.store.getSnapshot(ref)).dag as Dag;
      return queueOf(dag, this.s.customQueues, r.queue || undefined);
    } catch (e) {
      // It still holds its slot; the queue keeps the capacity it was declared with.
      const known = ledger.capacityOf(name);
      this.s.warn(
        `run ${r.dagRunId} of DAG "${r.name}" holds a slot of queue "${name}", but its DAG snapshot cannot be read (${(e as Error).message}): ${known === undefined ? 'the queue takes 1 run at once until a run of it declares its capacity' : `the queue keeps capacity ${known}`}`,
      );
      return { name, type: 'dag-based', capacity: known ?? 1 };
    }
  }

  /** spec: an activated run that does not become running within 10 s is taken off and failed. */
  #failActivation(ref: RunRef): Promise<void> {
    return this.s.leave(ref, async () => {
      this.s.foreign.delete(refKey(ref));
      const run = await this.s.deps.store.getRun(ref).catch(() => undefined);
      if (run?.status === RunStatus.Queued) {
        await this.s.failQueued(
          ref,
          `the run left its queue but did not become running within ${ACTIVATION_LIMIT_MS / 1000} s (no worker took it); taken off the queue`,
        );
        await this.s.deps.remote?.cancel(ref).catch(() => undefined);
      }
      this.s.ledger?.release(ref);
    });
  }
}
