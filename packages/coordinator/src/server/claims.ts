import { AppError, ErrorCode, RunStatus, isFinalRunStatus } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { ClaimRequest, ClaimResponse } from '../wire/messages.js';
import { casPause } from './cas-pause.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { badArg, unavailable } from './grpc-errors.js';
import type { RemoteRun } from './remote-runs.js';
import type { RunTracker } from './run-tracker.js';
import { refOf } from './wire-refs.js';

/**
 * Claims (`ClaimRun`): a worker that took a run off its dispatch queue asks for it; exactly one
 * worker gets it, and the run's record names that worker as its owner.
 */
export class Claims {
  readonly #ctx: CoordinatorContext;
  readonly #tracker: RunTracker;
  /** Claim saves not yet on disk (stop waits for them). */
  readonly #saving = new Set<Promise<void>>();

  constructor(ctx: CoordinatorContext, tracker: RunTracker) {
    this.#ctx = ctx;
    this.#tracker = tracker;
  }

  /** Grants the run to the worker, or refuses with the reason. */
  async claim(req: ClaimRequest): Promise<ClaimResponse> {
    const ref = refOf(req.run);
    if (!ref || req.workerId === '') throw badArg('ClaimRun needs worker_id and run');
    const root = refOf(req.root) ?? ref;
    const refuse = (reason: string): ClaimResponse => ({
      granted: false,
      reason,
      recordJson: '',
      logDir: this.#ctx.deps.logDir,
      runLogSize: 0,
    });
    const held = this.#ctx.registry.adminStateOf(req.workerId);
    if (held !== undefined)
      // Cordoned or drained while it fetched the job: the run goes back to its queue.
      return { ...refuse(`worker "${req.workerId}" is ${held}`), requeue: true };
    await this.#afterOwnClaims(req, ref, root);
    const record = await this.#claimable(req, ref, root);
    if (typeof record === 'string') return refuse(record);
    const tracked = this.#ctx.runs.get(ref, root);
    if (tracked?.cancelRequested) {
      await this.#tracker.finishUnclaimed(
        ref,
        RunStatus.Cancelled,
        'stopped before a worker started it',
        root,
      );
      return refuse(`run ${ref.dagRunId} was stopped`);
    }
    // The run log's size is read while the claim is saved: nothing writes that log before a
    // worker is granted the run (only its owner sends log chunks), so the save cannot change it.
    const logSize = record.log === '' ? Promise.resolve(0) : this.#ctx.logs.sizeOf(record.log);
    logSize.catch(() => undefined); // awaited below; a refused claim must not leave it unheard
    // The record as saved: after a retry it is not the first one read.
    const taken = await this.#take(req, ref, root, record);
    if (typeof taken === 'string') return refuse(taken);
    // The claim is saved: a failed read here is answered UNAVAILABLE, so the worker asks again
    // and is granted the run it owns (#repeat) instead of leaving it owned and never run.
    const runLogSize = await logSize.catch((e: unknown) => {
      throw unavailable(
        `reading the log of run ${ref.dagRunId} to claim it: ${(e as Error).message}`,
      );
    });
    return {
      granted: true,
      reason: '',
      recordJson: JSON.stringify(taken),
      logDir: this.#ctx.deps.logDir,
      runLogSize,
    };
  }

  /**
   * Waits while an earlier claim of the same worker for the run is still being saved (its
   * answer came late, past the worker's deadline): this one is then decided on what it saved.
   */
  async #afterOwnClaims(req: ClaimRequest, ref: RunRef, root: RunRef): Promise<void> {
    for (;;) {
      const held = this.#ctx.runs.get(ref, root);
      if (held?.claiming?.workerId !== req.workerId || held.claimSettled === undefined) return;
      await held.claimSettled;
    }
  }

  /** Resolves once every claim save is on disk. */
  async settled(): Promise<void> {
    await Promise.all([...this.#saving]);
  }

  /**
   * The run's record when no one has it and it has not ended; else why it cannot be claimed.
   * `retry`: `req` asking again after its save lost a race (its own hold is no obstacle).
   */
  async #claimable(
    req: ClaimRequest,
    ref: RunRef,
    root: RunRef,
    retry = false,
  ): Promise<DagRunRecord | string> {
    const taken = (): string | undefined => {
      const tracked = this.#ctx.runs.get(ref, root);
      if (tracked?.finishing) return `run ${ref.dagRunId} is being ended before a worker took it`;
      const claiming = tracked?.claiming;
      if (claiming !== undefined && !(retry && claiming === req)) {
        // the same worker asking again while its earlier request still saves (its answer was
        // late or lost): told to ask again, not refused, or the run stays its and never runs
        if (claiming.workerId === req.workerId)
          throw unavailable(
            `run ${ref.dagRunId} is being claimed by this worker's earlier request; send the claim again`,
          );
        return `run ${ref.dagRunId} is being claimed by another worker's request`;
      }
      // Held for this same worker: its claim was saved but the answer lost (a late or failed
      // reply); the stored owner decides below (#repeat: the same process, not running it).
      if (tracked?.workerId !== undefined && tracked.workerId !== req.workerId)
        return `run ${ref.dagRunId} was already claimed by worker "${tracked.workerId}"`;
      return undefined;
    };
    const before = taken();
    if (before !== undefined) return before;
    let record: DagRunRecord;
    try {
      record = await this.#ctx.deps.store.getRun(ref, { root });
    } catch (e) {
      // Not stored (or unreadable): refused. The store away: the worker sends the claim again.
      if (AppError.is(e) && e.code !== ErrorCode.ServiceUnavailable)
        return `run ${ref.dagRunId} of DAG "${ref.name}" is unknown: ${e.message}`;
      throw unavailable(`reading run ${ref.dagRunId} to claim it: ${(e as Error).message}`);
    }
    // Checked again after the read: a concurrent claim (or end) of the run may have won meanwhile.
    const after = taken();
    if (after !== undefined) return after;
    if (isFinalRunStatus(record.status))
      return `run ${ref.dagRunId} already ended (status ${record.status})`;
    const owner = record.owner?.workerId;
    if (owner !== undefined && owner !== 'local' && owner !== '' && !this.#repeat(req, record))
      return `run ${ref.dagRunId} was already claimed by worker "${owner}"`;
    return record;
  }

  /**
   * The same worker process sending its claim again after its save landed but was answered
   * UNAVAILABLE (the record names it; it does not list the run as running): granted again.
   */
  #repeat(req: ClaimRequest, record: DagRunRecord): boolean {
    const o = record.owner;
    if (o?.workerId !== req.workerId || o.pid !== req.pid || o.host !== req.host) return false;
    if (o.processStart !== req.processStart) return false;
    const listed = this.#ctx.registry.get(req.workerId)?.runningTasks ?? [];
    return !listed.some((t) => t.dagName === record.name && t.dagRunId === record.dagRunId);
  }

  /**
   * Makes the run the worker's: tracked as its at once (a second claim here is refused while the
   * save is under way), then its record, owned by it and running, saved only if the stored
   * revision is still the one read. A stop that ended the run, or a claim through another
   * coordinator, written meanwhile makes the save fail: the claim is refused (the stop wins when
   * its write lands first). The record as saved, or why the run cannot be claimed.
   */
  async #take(
    req: ClaimRequest,
    ref: RunRef,
    root: RunRef,
    first: DagRunRecord,
  ): Promise<DagRunRecord | string> {
    const tracked = this.#ctx.runs.get(ref, root);
    const run = tracked ?? this.#tracker.track(ref, root, req.workerId, {});
    run.claiming = req;
    run.workerId = req.workerId;
    let settle: () => void = () => undefined;
    run.claimSettled = new Promise<void>((r) => (settle = r));
    try {
      return await this.#takeHeld(req, ref, root, first, run, tracked);
    } finally {
      settle();
    }
  }

  /** {@link #take} once the run is held for `req`. */
  async #takeHeld(
    req: ClaimRequest,
    ref: RunRef,
    root: RunRef,
    first: DagRunRecord,
    run: RemoteRun,
    tracked: RemoteRun | undefined,
  ): Promise<DagRunRecord | string> {
    const { deps } = this.#ctx;
    const release = (): void => this.#release(run, req, tracked === undefined);
    let record: DagRunRecord | string = first;
    for (let attempt = 1; ; attempt++) {
      // Already this worker process's (a claim it made was saved, here or through another
      // coordinator, and its answer lost; #claimable checked the process and that it does not
      // run it): granted as stored, nothing written, so a late request never bumps the
      // revision under the reports of the run it runs.
      if (record.owner?.workerId === req.workerId) break;
      const read = record.revision;
      this.#own(req, record);
      if (await this.#swap(record, read, release)) break;
      // Changed since it was read: read again (a stop or claim elsewhere refuses it). The hold
      // stays (other claims here are refused), but a stop may end the run meanwhile.
      run.workerId = undefined;
      await casPause(deps.clock, attempt);
      record = await this.#claimable(req, ref, root, true).catch((e: unknown) => {
        release();
        throw e;
      });
      if (typeof record === 'string') {
        release();
        // Ended by the stop that won: nothing left to follow here (unless claimed again since).
        const idle = (): boolean => run.claiming === undefined && run.workerId === undefined;
        if ((await this.#ended(ref, root)) && this.#ctx.runs.get(ref, root) === run && idle())
          this.#ctx.runs.remove(ref, root);
        return record;
      }
      run.workerId = req.workerId;
    }
    run.claiming = undefined;
    run.revision = record.revision; // the worker's reports are swapped in against it
    const incarnation = this.#ctx.registry.get(req.workerId)?.incarnation;
    if (incarnation) run.incarnation = incarnation;
    if (tracked?.dispatchedAtMs !== undefined)
      deps.onClaimed?.(deps.clock.now().getTime() - tracked.dispatchedAtMs);
    deps.onRunUpdate?.(record);
    return record;
  }

  /** Names the worker as the record's owner and marks it running (a new revision). */
  #own(req: ClaimRequest, record: DagRunRecord): void {
    record.owner = {
      pid: req.pid,
      host: req.host,
      processStart: req.processStart,
      workerId: req.workerId,
    };
    record.status = RunStatus.Running;
    if (record.startedAt === '') record.startedAt = this.#ctx.deps.clock.now().toISOString();
    record.revision += 1;
  }

  /** The compare-and-swap of a claim; a failed write releases the run and answers UNAVAILABLE. */
  async #swap(record: DagRunRecord, expect: number, release: () => void): Promise<boolean> {
    const saving = this.#ctx.deps.store.saveRunIf(record, expect);
    const settled = saving.then(
      () => undefined,
      () => undefined,
    );
    this.#saving.add(settled);
    try {
      return await saving;
    } catch (e) {
      release();
      // The worker sends the claim again (it waits out UNAVAILABLE).
      throw unavailable(`saving the claim of run ${record.dagRunId}: ${(e as Error).message}`);
    } finally {
      this.#saving.delete(settled);
    }
  }

  async #ended(ref: RunRef, root: RunRef): Promise<boolean> {
    const r = await this.#ctx.deps.store.getRun(ref, { root }).catch(() => undefined);
    return (
      r !== undefined && isFinalRunStatus(r.status) && !this.#ctx.runs.get(ref, root)?.finishing
    );
  }

  /**
   * Undoes the hold of the claim `req` on a run it did not get: untracked (`added` by the claim),
   * or back to waiting. Left as it is when another claim or end has it meanwhile.
   */
  #release(run: RemoteRun, req: ClaimRequest, added: boolean): void {
    if (run.claiming !== req) return;
    run.claiming = undefined;
    if (run.workerId === req.workerId) run.workerId = undefined;
    if (added && this.#ctx.runs.get(run.ref, run.root) === run)
      this.#ctx.runs.remove(run.ref, run.root);
  }
}
