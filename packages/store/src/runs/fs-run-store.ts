import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  AppError,
  ErrorCode,
  RunStatus,
  alreadyExists,
  badRequest,
  notFound,
  type Clock,
} from '@trellis/core';
import type { RunRecorder } from '@trellis/engine';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { tempPathFor, writeFileAtomic, writeNewFile } from '../fs/atomic-write.js';
import { isExisting, isMissing, messageOf } from '../fs/fs-errors.js';
import { DagIndex } from '../index-file/dag-index.js';
import {
  SNAPSHOT_FILE,
  STATUS_FILE,
  StoreLayout,
  isSafeDagName,
  type RunLocation,
} from '../layout/store-layout.js';
import { LocalRunRecorder } from '../logs/local-recorder.js';
import { isOrphanedOwner } from '../owner/orphan.js';
import { hasStopRequest, watchStopFile, writeStopRequest } from '../stop/stop-request.js';
import { KeyedSerialQueue } from './keyed-serial-queue.js';
import { DAY_MS, isExpired } from './retention.js';
import { selectRuns, type IndexedRun, type RunFilter } from './run-filter.js';
import { parseSnapshot, type RunSnapshot } from './run-snapshot.js';
import {
  isChildRun,
  sameSummaryFields,
  storageRootOf,
  toRunSummary,
  type RunSummary,
} from './run-summary.js';
import { RunDeleter, TEMP_CREATE_PREFIX } from './run-deleter.js';
import { locateForRead, locateForWrite, runNotFound } from './run-locations.js';
import { runDirNames, scanDagSummaries } from './scan-dag-runs.js';
import { parseRecord, readDiskRevision, serializeRecord } from './status-file.js';
import { RecordCache } from './record-cache.js';
import { readLogChunk } from '../logs/read-log-chunk.js';
import { cleanupStore, type CleanupReport, type RetentionDays } from './cleanup-all.js';
import type { LogChunk, LogQuery } from '../logs/log-window.js';

/** Options of `FsRunStore`. */
export interface FsRunStoreOptions {
  /** Absolute directory for run records (`<dataDir>/runs/...`). */
  readonly dataDir: string;
  /** Absolute directory for run and step logs. */
  readonly logDir: string;
  /** Time for run-log lines, retention and lock ages. */
  readonly clock: Clock;
  /**
   * Receives a sentence for each problem the store works around instead of failing: a corrupt
   * record skipped by an index rebuild, a log write error. @default ignore
   */
  readonly warn?: (message: string) => void;
  /** Compact a DAG's index when it holds more than this many lines per live run. @default 4 */
  readonly indexCompactFactor?: number;
}

/** Where a child run is stored: under its root run. */
export interface RootOption {
  /** The root run of a child run; absent, undefined or the run itself for a top-level run. */
  readonly root?: RunRef | undefined;
}

/**
 * The file store of runs (ARCHITECTURE.md section 4, issue 3 item 3): one folder per run with
 * `status.json` (written atomically on every save) and `dag.json`; child runs under their root
 * run; a per-DAG append-only `index.jsonl` so listings never read the records; logs under
 * `logDir`. Several processes (the server and the CLI) may share one store: records are
 * replaced by rename, the index is read incrementally, and stop requests are files.
 *
 * Errors are `AppError`s: `not_found` for a missing run, `already_exists` for a taken id,
 * `bad_request` for a name or id that cannot be a folder, `internal_error` for a corrupt record.
 */
export class FsRunStore {
  readonly #layout: StoreLayout;
  readonly #clock: Clock;
  readonly #warn: (message: string) => void;
  readonly #compactFactor: number;
  /** Per-run chain: saves of one run are applied in call order. */
  readonly #saves = new KeyedSerialQueue();
  readonly #indexes = new Map<string, DagIndex>();
  /** Parsed status files, revalidated by stat (polling readers). */
  readonly #records = new RecordCache();
  readonly #deleter: RunDeleter;
  /** Revision this process last wrote to a running record's status file, by path. */
  readonly #written = new Map<string, number>();
  /** Folders this process made or found (a DAG's runs folder), so a new run costs one mkdir. */
  readonly #dirs = new Set<string>();
  /** Log folders made by `createRun` whose run has no recorder yet (it need not make them). */
  readonly #madeLogDirs = new Set<string>();

  constructor(options: FsRunStoreOptions) {
    this.#layout = new StoreLayout(options.dataDir, options.logDir);
    this.#clock = options.clock;
    this.#warn = options.warn ?? (() => undefined);
    this.#compactFactor = options.indexCompactFactor ?? 4;
    this.#deleter = new RunDeleter({
      layout: this.#layout,
      index: (dag) => this.#index(dag),
      saves: this.#saves,
      clock: this.#clock,
      warn: this.#warn,
      notFound: (ref) => this.#notFound(ref),
    });
  }

  /**
   * A chunk of a log file (run or step log) without loading the file (spec: Log chunk), so the
   * store can serve the API's run queries directly. Errors: not_found for a missing file.
   */
  readLog(path: string, query: LogQuery = {}): Promise<LogChunk> {
    return readLogChunk(path, query);
  }

  /** Path of a run's log (`<logDir>/<dag>/<id>/run.log`), for the record's `log`. */
  runLogPath(ref: RunRef): string {
    return this.#layout.runLogPath(ref);
  }

  /**
   * Stores a new run with its DAG snapshot. The folder is prepared under a temporary name and
   * renamed into place, so a crash never leaves a run without a record. A child run (one with
   * `parent`) is stored under its root run, which must exist.
   *
   * Errors: `already_exists` when the id is taken (for a child: under its root); `not_found`
   * when a child's root run does not exist; `bad_request` for an unusable name or id.
   */
  async createRun(record: DagRunRecord, snapshot: RunSnapshot): Promise<void> {
    const loc = locateForWrite(this.#layout, record);
    const root = storageRootOf(record);
    const kind = root === undefined ? 'run' : 'child run';
    const status = serializeRecord(record);
    const dag = JSON.stringify(snapshot);
    const summary = toRunSummary(record);
    // A run created running is not synced (like its later running saves, see saveRun): after an
    // OS crash it is recovered as failed, or gone with its folder (directories are not synced).
    const durable = isDurableStatus(record.status);
    await this.#saves.run(loc.dir, async () => {
      if (root !== undefined && !(await exists(this.#layout.locate(root).dir)))
        throw notFound('run', `${root.name}/${root.dagRunId}`);
      const parent = dirname(loc.dir);
      // A taken id shows when the rename meets the existing (never empty) folder.
      const temp = join(parent, `${TEMP_CREATE_PREFIX}${record.dagRunId}-${randomHex()}`);
      await this.#mkdirIn(parent, temp);
      try {
        // Both files are in a private folder until the rename publishes it: write them together.
        // Private until the rename publishes the folder: no temporary names needed inside it.
        await Promise.all([
          writeNewFile(join(temp, SNAPSHOT_FILE), dag, { durable }),
          writeNewFile(join(temp, STATUS_FILE), status, { durable }),
        ]);
        await rename(temp, loc.dir);
      } catch (e) {
        await rm(temp, { recursive: true, force: true });
        if (isExisting(e)) throw alreadyExists(kind, record.dagRunId);
        throw e;
      }
      const logDir = this.#layout.runLogDir(record);
      await Promise.all([
        mkdir(logDir, { recursive: true }).then(() => this.#noteLogDir(logDir)),
        this.#index(loc.indexDag).put(summary),
      ]);
    });
  }

  /** Remembers a log folder made for a new run, for its recorder (a bounded number of them). */
  #noteLogDir(dir: string): void {
    this.#madeLogDirs.add(dir);
    // runs that execute elsewhere (a worker) never take theirs: forget the oldest
    if (this.#madeLogDirs.size > MADE_LOG_DIRS_KEPT)
      this.#madeLogDirs.delete(this.#madeLogDirs.values().next().value as string);
  }

  /**
   * Makes the folder `dir` inside `parent`, creating `parent` first when this process has not
   * seen it yet (a DAG's runs folder), or when it is gone (deleted meanwhile): one `mkdir` per run
   * instead of a recursive one that checks every level.
   */
  async #mkdirIn(parent: string, dir: string): Promise<void> {
    if (this.#dirs.has(parent)) {
      try {
        await mkdir(dir);
        return;
      } catch (e) {
        if (!isMissing(e)) throw e;
        this.#dirs.delete(parent);
      }
    }
    await mkdir(parent, { recursive: true });
    this.#dirs.add(parent);
    await mkdir(dir);
  }

  /**
   * Replaces a run's record. Saves of one run are applied in call order, and a record with a
   * lower `revision` than the one on disk is ignored (a late save never overwrites a newer one,
   * even from another process). The record is serialised when called, so the caller may keep
   * changing it. The index gets a line only when a summary field changed.
   *
   * Errors: `not_found` when the run was never created.
   */
  async saveRun(record: DagRunRecord): Promise<void> {
    const loc = locateForWrite(this.#layout, record);
    const durable = isDurableStatus(record.status);
    const summary = toRunSummary(record);
    const statusPath = join(loc.dir, STATUS_FILE);
    // The new content goes to a temporary file at once, outside the run's chain: consecutive
    // saves of a run write (and sync) their files side by side; only the renames, which publish
    // them, are applied one after another in call order.
    const temp = tempPathFor(statusPath);
    const written = writeNewFile(temp, serializeRecord(record), { durable }).then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
    );
    await this.#saves.run(loc.dir, async () => {
      let renamed = false;
      try {
        const failed = await written;
        if (failed !== undefined) throw failed;
        // The revision on disk is this process's own last one while it runs the run (only the
        // owner writes a running record), so it need not be read back at every save.
        const known = this.#written.get(statusPath);
        const onDisk = known ?? (await readDiskRevision(statusPath));
        if (record.revision < onDisk) return;
        // Durable (fsync) for the states that must survive a power loss: queued and final. The
        // saves in between are atomic renames; after an OS crash a run left "running" is
        // recovered as failed anyway, so their fsync (a few ms each) would buy nothing.
        await rename(temp, statusPath);
        renamed = true;
        if (durable) this.#written.delete(statusPath);
        else this.#written.set(statusPath, record.revision);
      } catch (e) {
        if (isMissing(e)) throw this.#notFound(record, storageRootOf(record));
        throw e;
      } finally {
        if (!renamed) await unlink(temp).catch(() => undefined);
      }
      await this.#index(loc.indexDag).put(summary);
    });
  }

  /**
   * Saves the record only if the stored one still has revision `expectRevision`, read from disk
   * (so a change by another process counts); false, writing nothing, when it changed meanwhile.
   * Used where two processes may decide about one run (a queued run being started and dequeued).
   * Errors: `not_found` when the run was never created.
   */
  async saveRunIf(record: DagRunRecord, expectRevision: number): Promise<boolean> {
    const loc = locateForWrite(this.#layout, record);
    const statusPath = join(loc.dir, STATUS_FILE);
    const lockPath = join(loc.dir, SWAP_LOCK);
    return this.#saves.run(loc.dir, async () => {
      // One process at a time between the read and the rename: an exclusive lock file.
      const lock = await open(lockPath, 'wx').catch(async (e: unknown) => {
        if (isMissing(e)) throw this.#notFound(record, storageRootOf(record));
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const st = await stat(lockPath).catch(() => undefined);
        // a lock left by a crashed process
        if (st && this.#clock.now().getTime() - st.mtimeMs > SWAP_LOCK_STALE_MS)
          await rm(lockPath, { force: true });
        return undefined;
      });
      if (lock === undefined) return false; // another process is deciding right now
      try {
        if ((await readDiskRevision(statusPath)) !== expectRevision) return false;
        await writeFileAtomic(statusPath, serializeRecord(record), {
          durable: isDurableStatus(record.status),
        });
        this.#written.delete(statusPath);
      } finally {
        await lock.close();
        await rm(lockPath, { force: true });
      }
      await this.#index(loc.indexDag).put(toRunSummary(record));
      return true;
    });
  }

  /**
   * A run's complete record; `root` locates a child run.
   * Errors: `not_found`; `internal_error` naming the file when the record is corrupt.
   */
  async getRun(ref: RunRef, opts: RootOption = {}): Promise<DagRunRecord> {
    const loc = this.#locateForRead(ref, opts.root);
    const path = join(loc.dir, STATUS_FILE);
    try {
      return parseRecord(path, await this.#records.read(path));
    } catch (e) {
      if (isMissing(e)) throw this.#notFound(ref, opts.root);
      throw e;
    }
  }

  /** The DAG snapshot a run was created with. Errors: as `getRun`. */
  async getSnapshot(ref: RunRef, opts: RootOption = {}): Promise<RunSnapshot> {
    const path = join(this.#locateForRead(ref, opts.root).dir, SNAPSHOT_FILE);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      if (isMissing(e)) throw this.#notFound(ref, opts.root);
      throw e;
    }
    return parseSnapshot(path, text);
  }

  /**
   * The most recently created top-level run of a DAG (spec: `dagRunId` `latest`).
   * Errors: `not_found` when the DAG has no runs.
   */
  async latestRun(dagName: string): Promise<DagRunRecord> {
    if (isSafeDagName(dagName)) {
      for (const e of await this.#index(dagName).entries()) {
        if (isChildRun(e.summary)) continue;
        return this.getRun(e.summary);
      }
    }
    throw notFound('run', `${dagName}/latest`);
  }

  /**
   * Run summaries matching `filter`, newest first by `createdAt`, from the index (no record is
   * read). Top-level runs only unless `includeChildren`.
   */
  async listRuns(filter: RunFilter = {}): Promise<RunSummary[]> {
    const { name } = filter;
    // Children are indexed under their root's DAG: with includeChildren every index is read.
    const dags =
      name !== undefined && filter.includeChildren !== true
        ? isSafeDagName(name)
          ? [name]
          : []
        : await this.#dagNames();
    const lists = await Promise.all(dags.map((d) => this.#index(d).entries()));
    return selectRuns(lists, filter);
  }

  /**
   * The child runs stored under a root run (children of children included), oldest first.
   * Errors: `not_found` when the root run does not exist.
   */
  async listChildren(rootRef: RunRef): Promise<RunSummary[]> {
    const loc = this.#locateForRead(rootRef);
    if (!(await exists(loc.dir))) throw this.#notFound(rootRef);
    const entries = await this.#index(rootRef.name).entries();
    const children: IndexedRun[] = [];
    for (const e of entries)
      if (isChildRun(e.summary) && e.summary.root.dagRunId === rootRef.dagRunId) children.push(e);
    return children.reverse().map((e) => e.summary);
  }

  /** The recorder of a run executed in this process: saves here, logs under `logDir`. */
  recorderFor(record: DagRunRecord): RunRecorder {
    const ref: RunRef = { name: record.name, dagRunId: record.dagRunId };
    return new LocalRunRecorder({
      runLogPath: this.#layout.runLogPath(ref),
      logDirExists: this.#madeLogDirs.delete(this.#layout.runLogDir(record)),
      stepLogPaths: (key) => this.#layout.stepLogPaths(ref, key),
      save: (r) => this.saveRun(r),
      clock: this.#clock,
      warn: this.#warn,
    });
  }

  /**
   * Deletes a top-level run with its child runs and the logs of all of them. The folder is
   * first renamed to a trash name, so a crash midway leaves nothing half-visible; the next
   * deletion or retention pass of the DAG finishes the job.
   * Errors: `not_found`.
   */
  async deleteRun(ref: RunRef): Promise<void> {
    const loc = this.#locateForRead(ref);
    await this.#deleter.sweepTrash(ref.name);
    await this.#deleter.deleteTree(ref, loc);
  }

  /**
   * Retention (`histRetentionDays`): deletes the DAG's top-level runs that ended (status 2, 3,
   * 4, 6, or 0 never started: by `createdAt`) more than `days` days before the clock's now,
   * together with their child runs and logs. A running or queued run, or one with a running or
   * queued child, is kept. Each candidate is confirmed from its record, not only the index.
   * Returns how many runs were deleted.
   */
  async deleteRunsOlderThan(dagName: string, days: number): Promise<number> {
    if (!(days >= 0))
      throw badRequest(`invalid retention ${days}: use a number of days of 0 or more`);
    if (!isSafeDagName(dagName)) return 0;
    const cutoffMs = this.#clock.now().getTime() - days * DAY_MS;
    await this.#deleter.sweepTrash(dagName);
    let deleted = 0;
    for (const e of [...(await this.#index(dagName).entries())]) {
      const s = e.summary;
      if (isChildRun(s) || !isExpired(s, cutoffMs)) continue;
      const loc = this.#layout.locate(s);
      const record = await this.#readOrUndefined(s, undefined);
      if (record === undefined) {
        await this.#index(dagName).remove([loc.key]); // a stale index line: nothing on disk
        continue;
      }
      if (!isExpired(record, cutoffMs)) continue;
      const children = await this.#deleter.childRecords(loc.dir);
      if (children.some((c) => c.status === RunStatus.Running || c.status === RunStatus.Queued))
        continue;
      try {
        await this.#deleter.deleteTree(s, loc);
        deleted++;
      } catch (err) {
        if (!(AppError.is(err) && err.code === ErrorCode.NotFound)) throw err;
      }
    }
    return deleted;
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
        dagNames: () => this.#dagNames(),
        deleteRunsOlderThan: (dag, d) => this.deleteRunsOlderThan(dag, d),
        liveRuns: () => this.listRuns({ includeChildren: true }),
        logDir: this.#layout.logDir,
        now: () => this.#clock.now(),
      },
      days,
    );
  }

  /** The `.out` and `.err` log paths of a node of a run (`key` = node name). */
  stepLogPaths(ref: RunRef, key: string): { stdoutPath: string; stderrPath: string } {
    return this.#layout.stepLogPaths(ref, key);
  }

  /**
   * Asks the process executing a run to stop it, by writing `stop-requested` into the run's
   * folder (any process sharing the store sees it through `watchStop`).
   * Errors: `not_found`.
   */
  async requestStop(ref: RunRef, opts: RootOption = {}): Promise<void> {
    const loc = this.#locateForRead(ref, opts.root);
    try {
      await writeStopRequest(loc.dir, this.#clock.now());
    } catch (e) {
      if (isMissing(e)) throw this.#notFound(ref, opts.root);
      throw e;
    }
  }

  /** True when a stop was requested for the run. */
  isStopRequested(ref: RunRef, opts: RootOption = {}): boolean {
    return hasStopRequest(this.#locateForRead(ref, opts.root).dir);
  }

  /**
   * Calls `onStop` once when a stop is requested for the run (also when it already was). Uses
   * `fs.watch` plus a 1 s poll. Returns a disposer. Errors thrown by `onStop` are reported
   * through `warn`.
   */
  watchStop(ref: RunRef, opts: RootOption, onStop: () => void): () => void {
    const loc = this.#locateForRead(ref, opts.root);
    return watchStopFile(loc.dir, () => {
      try {
        onStop();
      } catch (e) {
        this.#warn(`stop handler of run ${ref.name}/${ref.dagRunId} failed: ${messageOf(e)}`);
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
  async findOrphanedRuns(): Promise<DagRunRecord[]> {
    const out: DagRunRecord[] = [];
    for (const dag of await this.#dagNames()) {
      const index = this.#index(dag);
      for (const e of await index.entries()) {
        const s = e.summary;
        const maybeRunning =
          s.status === RunStatus.Running ||
          ((s.status === RunStatus.NotStarted || s.status === RunStatus.Queued) &&
            s.owner !== undefined);
        if (!maybeRunning) continue;
        const record = await this.#readOrUndefined(s, storageRootOf(s));
        if (record === undefined) continue;
        const fresh = toRunSummary(record);
        if (!sameSummaryFields(fresh, s)) await index.put(fresh);
        if (record.status === RunStatus.Running && isOrphanedOwner(record.owner)) out.push(record);
      }
    }
    return out;
  }

  #index(dagName: string): DagIndex {
    let index = this.#indexes.get(dagName);
    if (index === undefined) {
      const dagDir = this.#layout.dagDir(dagName);
      index = new DagIndex({
        path: this.#layout.indexPath(dagName),
        scan: () => scanDagSummaries(dagDir, dagName, this.#warn),
        warn: this.#warn,
        compactFactor: this.#compactFactor,
        compactMinLines: 64,
        lockStaleMs: 60_000,
        now: () => this.#clock.now(),
      });
      this.#indexes.set(dagName, index);
    }
    return index;
  }

  /** DAG folders under `runs/` (dot-names are not DAGs). */
  async #dagNames(): Promise<string[]> {
    return (await runDirNames(this.#layout.runsDir)) ?? [];
  }

  #locateForRead(ref: RunRef, root?: RunRef): RunLocation {
    return locateForRead(this.#layout, ref, root);
  }

  #notFound(ref: RunRef, root?: RunRef): AppError {
    return runNotFound(ref, root);
  }

  /** The record, or undefined when it is gone; a corrupt record is reported and skipped. */
  async #readOrUndefined(ref: RunRef, root: RunRef | undefined): Promise<DagRunRecord | undefined> {
    try {
      return await this.getRun(ref, root === undefined ? {} : { root });
    } catch (e) {
      if (AppError.is(e) && e.code === ErrorCode.NotFound) return undefined;
      if (AppError.is(e)) {
        this.#warn(e.message);
        return undefined;
      }
      throw e;
    }
  }
}

const randomHex = (): string => randomBytes(4).toString('hex');

const exists = async (path: string): Promise<boolean> => {
  try {
    await stat(path);
    return true;
  } catch (e) {
    if (isMissing(e)) return false;
    throw e;
  }
};

/** States whose record and index line are synced to disk (they must survive a power loss). */
const isDurableStatus = (s: RunStatus): boolean =>
  s !== RunStatus.Running && s !== RunStatus.NotStarted;

/** Log folders of new runs remembered for their recorders (beyond: the recorder makes sure). */
const MADE_LOG_DIRS_KEPT = 1000;

/** Lock file of {@link FsRunStore.saveRunIf} in a run's folder (dot-names are not runs). */
const SWAP_LOCK = '.swap.lock';
/** A swap lock older than this was left by a crashed process. */
const SWAP_LOCK_STALE_MS = 10_000;
