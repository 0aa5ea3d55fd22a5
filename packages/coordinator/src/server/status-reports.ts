import { dirname, join } from 'node:path';
import { AppError, ErrorCode, isFinalRunStatus } from '@trellis/core';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import type { StatusAck, StatusReport } from '../wire/messages.js';
import type { CoordinatorContext } from './coordinator-context.js';
import { badArg, unavailable } from './grpc-errors.js';
import { applyChunk, outsideLogDirs } from './log-stream.js';
import { runKey, type RemoteRun } from './remote-runs.js';
import type { RunTracker } from './run-tracker.js';
import { refOf } from './wire-refs.js';

/**
 * Status reports (`ReportStatus`): a worker sends a run's whole record with a per-run sequence
 * number; each is applied once and in order, and a final one ends the run here.
 */
export class StatusReports {
  readonly #ctx: CoordinatorContext;
  readonly #tracker: RunTracker;

  constructor(ctx: CoordinatorContext, tracker: RunTracker) {
    this.#ctx = ctx;
    this.#tracker = tracker;
  }

  /**
   * Applies the report unless it is old or from a worker that no longer owns the run. Log chunks
   * it carries (a run's last lines) are applied first, as `StreamLogs` would have before it.
   */
  async report(req: StatusReport): Promise<StatusAck> {
    const ref = refOf(req.run);
    if (!ref || req.workerId === '') throw badArg('ReportStatus needs worker_id and run');
    if (req.logs === undefined || req.logs.length === 0) return this.#report(req, ref);
    await this.#applyLogs(req, ref);
    return { ...(await this.#report(req, ref)), logsApplied: true };
  }

  /**
   * The report's log chunks, each at its offset (bytes already there skipped, so a report sent
   * again writes none twice). A chunk outside the log folders is left out with a warning rather
   * than refusing the report (which the worker would then skip: its run would never end here).
   */
  async #applyLogs(req: StatusReport, ref: RunRef): Promise<void> {
    for (const chunk of req.logs ?? []) {
      const size = await applyChunk(this.#ctx.logs, chunk).catch((e: unknown) => {
        throw unavailable(
          `cannot write the log lines of report ${req.seq} of run ${ref.dagRunId} (${(e as Error).message}); send it again`,
        );
      });
      if (size === undefined)
        this.#ctx.warn(
          `status report ${req.seq} of run ${ref.dagRunId}: ${outsideLogDirs(chunk.path)}: left out`,
        );
    }
  }

  async #report(req: StatusReport, ref: RunRef): Promise<StatusAck> {
    const { deps, runs } = this.#ctx;
    const root = refOf(req.root) ?? ref;
    const key = runKey(ref, root);
    if (this.#ctx.dropped.has(req.workerId, key)) return { appliedSeq: req.seq, dropped: true };
    let run = runs.get(ref, root);
    if (run?.workerId !== undefined && run.workerId !== req.workerId)
      return { appliedSeq: req.seq, dropped: true };
    if (run && req.seq <= run.seq) return { appliedSeq: run.seq, dropped: false };
    let record: DagRunRecord;
    try {
      record = JSON.parse(req.recordJson) as DagRunRecord;
    } catch {
      throw badArg(`status report of run ${ref.dagRunId} carries no valid record JSON`);
    }
    let created = false;
    if (!run) {
      const adopted = await this.#adopt(req, ref, root, record);
      if ('appliedSeq' in adopted) return adopted;
      ({ run, created } = adopted);
    }
    // Written first, acknowledged after: a report the store refused is sent again by the worker
    // (UNAVAILABLE) and applied then, instead of being taken as applied. A child run created
    // from this report holds it already.
    let stored: DagRunRecord | undefined;
    try {
      if (!created) stored = await this.#save(run, record, ref, root);
    } catch (e) {
      throw unavailable(
        `cannot store report ${req.seq} of run ${ref.dagRunId} of DAG "${ref.name}" (${(e as Error).message}); send it again`,
      );
    }
    run.seq = Math.max(run.seq, req.seq);
    // The store holds it already: applied before, by this coordinator or another on the same
    // store (the worker moved before its ack came), or overtaken by a coordinator's write.
    if (stored !== undefined && record.revision <= stored.revision)
      return this.#applied(req, ref, root, record, stored);
    deps.onRunUpdate?.(record);
    if (isFinalRunStatus(record.status)) {
      this.#ended(req.workerId, ref, root, true);
      const own = record.log !== '' ? dirname(record.log) : undefined;
      this.#ctx.logs.forgetUnder(own ?? join(deps.logDir, ref.name, ref.dagRunId));
    }
    return { appliedSeq: req.seq, dropped: false };
  }

  /**
   * Stores the report's record when it is newer than the stored one. When this coordinator knows
   * the stored revision (`run.revision`: it wrote the claim or the last report, or read the
   * record) and the report is newer, a compare-and-swap against it, without a read: it fails if
   * any other write landed since (a lost-run failure, a coordinator sharing the store), and the
   * record is then read as before. The stored record read, or undefined when the swap wrote.
   */
  async #save(
    run: RemoteRun,
    record: DagRunRecord,
    ref: RunRef,
    root: RunRef,
  ): Promise<DagRunRecord | undefined> {
    const { store } = this.#ctx.deps;
    const known = run.revision;
    if (known !== undefined && record.revision > known && (await store.saveRunIf(record, known))) {
      run.revision = record.revision;
      return undefined;
    }
    const stored = await store.getRun(ref, { root });
    if (record.revision > stored.revision) await store.saveRun(record);
    // a save that the store ignored (a newer revision there) makes the next swap fail: read again
    run.revision = Math.max(record.revision, stored.revision);
    return stored;
  }

  /**
   * The run ended here: no longer tracked, and its slot free at once (no heartbeat waited for).
   * When the worker's own final report ended it (`reported`), the heartbeats it sends before
   * the answer reaches it still list the run ({@link ReportedRuns}).
   */
  #ended(workerId: string, ref: RunRef, root: RunRef, reported: boolean): void {
    this.#ctx.runs.remove(ref, root);
    if (reported) {
      this.#ctx.reported.add(workerId, runKey(ref, root));
      const w = this.#ctx.registry.get(workerId);
      if (w)
        w.runningTasks = w.runningTasks.filter(
          (t) => t.dagName !== ref.name || t.dagRunId !== ref.dagRunId,
        );
    }
    this.#ctx.capacity.changed();
  }

  /**
   * A report whose record the store already holds (or a later one): acknowledged, not applied
   * again. When the stored run ended and the report's did not (a coordinator failed the run),
   * the worker is told to drop it.
   */
  #applied(
    req: StatusReport,
    ref: RunRef,
    root: RunRef,
    record: DagRunRecord,
    stored: DagRunRecord,
  ): StatusAck {
    const ended = isFinalRunStatus(stored.status);
    if (ended) this.#ended(req.workerId, ref, root, isFinalRunStatus(record.status));
    return { appliedSeq: req.seq, dropped: ended && !isFinalRunStatus(record.status) };
  }

  /**
   * A run this coordinator does not track: a child run started on the worker (created here
   * from its snapshot), or a run adopted before this coordinator started. Tracked as the
   * worker's, unless it ended or another worker owns it (then the answer to send).
   */
  async #adopt(
    req: StatusReport,
    ref: RunRef,
    root: RunRef,
    record: DagRunRecord,
  ): Promise<{ run: RemoteRun; created: boolean } | StatusAck> {
    const { store } = this.#ctx.deps;
    // only a run the store does not have is unknown; the store away is UNAVAILABLE, so the
    // worker sends the report again (INVALID_ARGUMENT would make it throw the report away)
    const existing = await store.getRun(ref, { root }).catch((e: unknown) => {
      if (AppError.is(e) && e.code === ErrorCode.NotFound) return undefined;
      throw unavailable(
        `reading run ${ref.dagRunId} to apply report ${req.seq}: ${(e as Error).message}; send it again`,
      );
    });
    if (existing === undefined) {
      if (req.snapshotJson === '' || record.parent === undefined)
        throw badArg(`run ${ref.dagRunId} of DAG "${ref.name}" is unknown to this coordinator`);
      const snapshot = JSON.parse(req.snapshotJson) as { dag: unknown; localDags: unknown[] };
      await store.createRun(record, snapshot);
      const run = this.#tracker.track(ref, root, req.workerId, {});
      run.revision = record.revision;
      return { run, created: true };
    } else {
      const owner = existing.owner?.workerId;
      const ended = isFinalRunStatus(existing.status);
      if (ended || (owner !== undefined && owner !== req.workerId)) {
        // the worker's final report, stored by a coordinator that failed before answering: taken
        // here, so the heartbeats it sends until this answer reaches it may still list the run
        if (ended && owner === req.workerId && isFinalRunStatus(record.status))
          this.#ended(req.workerId, ref, root, true);
        return { appliedSeq: req.seq, dropped: !isFinalRunStatus(record.status) };
      }
    }
    const run = this.#tracker.track(ref, root, req.workerId, {});
    run.revision = existing.revision;
    return { run, created: false };
  }
}
