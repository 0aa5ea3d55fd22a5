import { AppError } from '@trellis/core';
import type { RunRecorder } from '@trellis/engine';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { errnoOf, isMissing, messageOf } from '../fs/fs-errors.js';
import type { StoreWriteErrors } from '../health/store-write-errors.js';
import { stepLogPathsBeside } from '../layout/log-locations.js';
import { isSafeDagName } from '../layout/store-layout.js';
import { LocalRunRecorder } from '../logs/local-recorder.js';
import type { LogChunk, LogQuery } from '../logs/log-window.js';
import { followLog, type LogFollow, type LogLinesListener } from '../logs/log-follower.js';
import { readLogChunk } from '../logs/read-log-chunk.js';
import { readTruncation } from '../logs/truncation-marker.js';
import { hasStopRequest, watchStopFile, writeStopRequest } from '../stop/stop-request.js';
import { cleanupStore, type CleanupReport, type RetentionDays } from './cleanup-all.js';
import { deleteExpiredRuns } from './expire-runs.js';
import { openFsRunRooms, type FsRunRooms } from './fs-run-rooms.js';
import type { FsRunStoreOptions, RootOption } from './fs-run-store-options.js';
import { findOrphanedRuns } from './orphaned-runs.js';
import type { RunFilter } from './run-filter.js';
import { locateForRead, runNotFound } from './run-locations.js';
import type { RunSnapshot } from './run-snapshot.js';
import type { RunSummary } from './run-summary.js';

export type { FsRunStoreOptions, RootOption } from './fs-run-store-options.js';

/**
 * The file store of runs (docs/architecture.md): one folder per run with `status.json` (written
 * atomically on every save) and `dag.json`; child runs under their root run; a per-DAG
 * append-only `index.jsonl` so listings never read the records; logs under `logDir`. Several
 * processes (the server and the CLI) may share one store: records are replaced by rename, the
 * index is read incrementally, and stop requests are files. Writes, reads and deletions are
 * rooms of their own (`RunWriter`, `RunReader`, `RunDeleter`, wired in fs-run-rooms.ts); this
 * class is their one entry.
 *
 * Errors are `AppError`s: `not_found` for a missing run, `already_exists` for a taken id,
 * `bad_request` for a name or id that cannot be a folder, `internal_error` for a corrupt record.
 */
export class FsRunStore {
  readonly #rooms: FsRunRooms;
  /** The store's write errors (`GET /health`, `svc_store_write_errors_total`, truncated logs). */
  readonly writeErrors: StoreWriteErrors;
  /** The data folder (`paths.dataDir`): `trellis migrate store` finds the suspend flags there. */
  readonly dataDir: string;

  constructor(options: FsRunStoreOptions) {
    this.#rooms = openFsRunRooms(options);
    this.writeErrors = this.#rooms.writeErrors;
    this.dataDir = options.dataDir;
  }

  /**
   * A chunk of a log file (run or step log) without loading the file (spec: Log chunk), so the
   * store can serve the API's run queries directly; `truncated` when a write to the file failed
   * (known to this process, or marked beside the file). Errors: not_found for a missing file.
   */
  async readLog(path: string, query: LogQuery = {}): Promise<LogChunk> {
    const [chunk, reason] = await Promise.all([
      readLogChunk(path, query),
      this.writeErrors.truncation(path) ?? readTruncation(path),
    ]);
    return reason === undefined ? chunk : { ...chunk, truncated: true, truncatedReason: reason };
  }

  /**
   * Follows a log file from line `fromLine`: lines now and as they are written (see
   * `followLog`), for the live log stream.
   */
  followLog(
    path: string,
    fromLine: number,
    onLines: LogLinesListener,
    onError: (e: Error) => void,
  ): LogFollow {
    return followLog(path, fromLine, onLines, onError);
  }

  /**
   * Path of a run's log (`<logDir>/<dag>/<id>/run.log`), for the record's `log`; under
   * `dagLogDir` (the DAG's `logDir`: `~` expanded, relative to the store's log folder) when given.
   */
  runLogPath(ref: RunRef, dagLogDir?: string): string {
    return this.#rooms.layout.runLogPath(ref, dagLogDir);
  }

  /**
   * Stores a new run with its DAG snapshot. The folder is prepared under a temporary name and
   * renamed into place, so a crash never leaves a run without a record. A child run (one with
   * `parent`) is stored under its root run, which must exist.
   *
   * Errors: `already_exists` when the id is taken (for a child: under its root); `not_found`
   * when a child's root run does not exist; `bad_request` for an unusable name or id.
   */
  createRun(record: DagRunRecord, snapshot: RunSnapshot): Promise<void> {
    return this.#rooms.writer.createRun(record, snapshot);
  }

  /**
   * Replaces a run's record. Saves of one run are applied in call order, and a record with a
   * lower `revision` than the one on disk is ignored (a late save never overwrites a newer one,
   * even from another process). The record is serialised when called, so the caller may keep
   * changing it. The index gets a line only when a summary field changed.
   *
   * Errors: `not_found` when the run was never created.
   */
  saveRun(record: DagRunRecord): Promise<void> {
    return this.#rooms.writer.saveRun(record).catch((e: unknown) => {
      // a file system failure (ENOSPC, EIO) is the store's disk trouble; not_found is not
      if (!AppError.is(e) && errnoOf(e) !== undefined)
        this.writeErrors.note('record', `${record.name}/${record.dagRunId}`, e);
      throw e;
    });
  }

  /**
   * Saves the record only if the stored one still has revision `expectRevision`, read from disk
   * (so a change by another process counts); false, writing nothing, when it changed meanwhile.
   * Used where two processes may decide about one run (a queued run being started and dequeued).
   * Errors: `not_found` when the run was never created.
   */
  saveRunIf(record: DagRunRecord, expectRevision: number): Promise<boolean> {
    return this.#rooms.writer.saveRunIf(record, expectRevision);
  }

  /**
   * A run's complete record; `root` locates a child run.
   * Errors: `not_found`; `internal_error` naming the file when the record is corrupt.
   */
  getRun(ref: RunRef, opts: RootOption = {}): Promise<DagRunRecord> {
    return this.#rooms.reader.getRun(ref, opts);
  }

  /** The DAG snapshot a run was created with. Errors: as `getRun`. */
  getSnapshot(ref: RunRef, opts: RootOption = {}): Promise<RunSnapshot> {
    return this.#rooms.reader.getSnapshot(ref, opts);
  }

  /**
   * The most recently created top-level run of a DAG (spec: `dagRunId` `latest`).
   * Errors: `not_found` when the DAG has no runs.
   */
  latestRun(dagName: string): Promise<DagRunRecord> {
    return this.#rooms.reader.latestRun(dagName);
  }

  /**
   * The summary of the most recently created top-level run of a DAG, from the index in memory
   * when it was read from disk less than `maxStaleMs` ago (the DAG list's latest runs: another
   * process's runs show within that time, this process's at once); undefined when it never ran.
   */
  latestSummary(dagName: string, maxStaleMs: number): Promise<RunSummary | undefined> {
    return this.#rooms.reader.latestSummary(dagName, maxStaleMs);
  }

  /**
   * Text that changes whenever a record of the DAG's runs (children stored under them
   * included) is created, saved, swapped in or deleted, by this process or another sharing the
   * data folder: one `stat` (dag-changes.ts). Undefined when the DAG has no runs folder.
   */
  changeStamp(dagName: string): Promise<string | undefined> {
    return Promise.resolve(isSafeDagName(dagName) ? this.#rooms.changes.stamp(dagName) : undefined);
  }

  /**
   * Run summaries matching `filter`, newest first by `createdAt`, from the index (no record is
   * read). Top-level runs only unless `includeChildren`.
   */
  listRuns(filter: RunFilter = {}): Promise<RunSummary[]> {
    return this.#rooms.reader.listRuns(filter);
  }

  /**
   * The child runs stored under a root run (children of children included), oldest first.
   * Errors: `not_found` when the root run does not exist.
   */
  listChildren(rootRef: RunRef): Promise<RunSummary[]> {
    return this.#rooms.reader.listChildren(rootRef);
  }

  /**
   * The recorder of a run executed in this process: saves here, logs where the record's `log`
   * says (its DAG's `logDir`), else under the store's `logDir`.
   */
  recorderFor(record: DagRunRecord): RunRecorder {
    const ref: RunRef = { name: record.name, dagRunId: record.dagRunId };
    const runLogPath = record.log !== '' ? record.log : this.#rooms.layout.runLogPath(ref);
    return new LocalRunRecorder({
      runLogPath,
      logDirExists: this.#rooms.writer.takeMadeLogDir(this.#rooms.layout.runLogDirOf(record)),
      stepLogPaths: (key) => stepLogPathsBeside(runLogPath, key),
      save: (r) => this.saveRun(r),
      clock: this.#rooms.clock,
      warn: this.#rooms.warn,
      writeErrors: this.writeErrors,
    });
  }

  /**
   * Deletes a top-level run with its child runs and the logs of all of them. The folder is
   * first renamed to a trash name, so a crash midway leaves nothing half-visible; the next
   * deletion or retention pass of the DAG finishes the job.
   * Errors: `not_found`.
   */
  async deleteRun(ref: RunRef): Promise<void> {
    const loc = locateForRead(this.#rooms.layout, ref);
    await this.#rooms.deleter.sweepTrash(ref.name);
    await this.#rooms.deleter.deleteTree(ref, loc);
  }

  /**
   * Retention (`histRetentionDays`): deletes the DAG's top-level runs that ended (status 2, 3,
   * 4, 6, or 0 never started: by `createdAt`) more than `days` days before the clock's now,
   * together with their child runs and logs. A running or queued run, or one with a running or
   * queued child, is kept. Each candidate is confirmed from its record, not only the index.
   * Returns how many runs were deleted.
   */
  deleteRunsOlderThan(dagName: string, days: number): Promise<number> {
    return deleteExpiredRuns(this.#rooms, dagName, days);
  }

  /**
   * Retention over the whole store (`trellis cleanup --older-than`, the scheduler's daily pass):
   * for every DAG with runs, deletes the runs that ended more than `days` days ago (a number, or
   * each DAG's own `histRetentionDays`) as `deleteRunsOlderThan` does, then removes run log
   * folders older than that whose run no longer exists, so no log outlives its record.
   */
  cleanupAll(days: RetentionDays): Promise<CleanupReport> {
    return cleanupStore(
      {
        dagNames: () => this.#rooms.indexes.dagNames(),
        deleteRunsOlderThan: (dag, d) => this.deleteRunsOlderThan(dag, d),
        liveRuns: () => this.listRuns({ includeChildren: true }),
        logDir: this.#rooms.layout.logDir,
        now: () => this.#rooms.clock.now(),
      },
      days,
    );
  }

  /** The `.out` and `.err` log paths of a node of a run (`key` = node name). */
  stepLogPaths(ref: RunRef, key: string): { stdoutPath: string; stderrPath: string } {
    return this.#rooms.layout.stepLogPaths(ref, key);
  }

  /**
   * Asks the process executing a run to stop it, by writing `stop-requested` into the run's
   * folder (any process sharing the store sees it through `watchStop`).
   * Errors: `not_found`.
   */
  async requestStop(ref: RunRef, opts: RootOption = {}): Promise<void> {
    const loc = locateForRead(this.#rooms.layout, ref, opts.root);
    try {
      await writeStopRequest(loc.dir, this.#rooms.clock.now());
    } catch (e) {
      if (isMissing(e)) throw runNotFound(ref, opts.root);
      throw e;
    }
  }

  /** True when a stop was requested for the run. */
  isStopRequested(ref: RunRef, opts: RootOption = {}): boolean {
    return hasStopRequest(locateForRead(this.#rooms.layout, ref, opts.root).dir);
  }

  /**
   * Calls `onStop` once when a stop is requested for the run (also when it already was). Uses
   * `fs.watch` plus a 1 s poll. Returns a disposer. Errors thrown by `onStop` are reported
   * through `warn`.
   */
  watchStop(ref: RunRef, opts: RootOption, onStop: () => void): () => void {
    const loc = locateForRead(this.#rooms.layout, ref, opts.root);
    return watchStopFile(loc.dir, () => {
      try {
        onStop();
      } catch (e) {
        this.#rooms.warn(`stop handler of run ${ref.name}/${ref.dagRunId} failed: ${messageOf(e)}`);
      }
    });
  }

  /**
   * Runs (children included) whose record says running but whose owner is gone: a local process
   * on this host that no longer runs (or a pid now used by another process), or no owner at all
   * (`isOrphanedOwner`). Candidates come from the index (running, or not started/queued with an
   * owner, in case the index missed the last change) and are confirmed from their records; a
   * stale index line is corrected on the way. Callers mark them failed and clean up.
   */
  findOrphanedRuns(): Promise<DagRunRecord[]> {
    return findOrphanedRuns(this.#rooms.indexes, this.#rooms.reader);
  }
}
