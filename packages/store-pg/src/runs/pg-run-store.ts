import { dirname } from 'node:path';
import type { Clock } from '@trellis/core';
import type { RunRecorder } from '@trellis/engine';
import type {
  LogChunkData,
  LogFollowHandle,
  LogWindowQuery,
  RunSnapshotData,
} from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import {
  runLogPathIn,
  StoreWriteErrors,
  type CleanupReport,
  type RetentionDays,
  type RunSummary,
} from '@trellis/store';
import type { PgDb } from '../db/pg-db.js';
import type { InstanceLiveness } from '../instances/instance-heartbeat.js';
import { followPgLog } from '../logs/pg-log-follow.js';
import { PgLogs } from '../logs/pg-logs.js';
import { PgRunRecorder } from '../logs/pg-recorder.js';
import { PgStopRequests } from '../stop/pg-stop-requests.js';
import { findPgOrphanedRuns } from './pg-orphaned-runs.js';
import { cleanupPgStore, deleteExpiredPgRuns, type PgRetentionDeps } from './pg-retention.js';
import {
  INSERT_RUN,
  insertValues,
  keyOf,
  keyOfRecord,
  keyValues,
  NEWEST_FIRST,
  runNotFound,
  runTaken,
  savedColumns,
  WHERE_KEY,
} from './run-rows.js';
import { RunListing } from './run-listing.js';
import { SerialChains } from './serial-chains.js';
import type { ListFilter } from './summary-index.js';

export interface PgRunStoreOptions {
  readonly db: PgDb;
  /** The folder log names are made under (the names the API shows; the lines are rows). */
  readonly logDir: string;
  readonly clock: Clock;
  readonly warn?: (message: string) => void;
  /**
   * Called with each record once it is written (created, saved, swapped in; not for a stale
   * save that was ignored), as the file store's `onRecordSaved`: the event bus hangs off it.
   */
  readonly onRecordSaved?: (record: DagRunRecord) => void;
  /** Runs the listing keeps in memory at most (`RunListingOptions.maxCachedRuns`). */
  readonly maxCachedRuns?: number;
  /**
   * Instance liveness (`trellis_instances`): with it, a run owned by a process not seen for
   * `staleAfterMs` is orphaned whatever its host; without it, only the pid probe on this host.
   */
  readonly liveness?: InstanceLiveness;
}

interface RootOption {
  readonly root?: RunRef | undefined;
}

/**
 * The run store in PostgreSQL (docs/ha.md): the same ports and behaviour as the file store
 * (`FsRunStore`), checked by one conformance suite (tests/integration/store-conformance). Every
 * call made while the database is away fails with `service_unavailable`.
 */
export class PgRunStore {
  readonly #db: PgDb;
  readonly #logDir: string;
  readonly #clock: Clock;
  readonly #warn: (message: string) => void;
  readonly #saves = new SerialChains();
  readonly #saved: (record: DagRunRecord) => void;
  readonly #listing: RunListing;
  readonly #liveness: InstanceLiveness | undefined;
  readonly #stops: PgStopRequests;
  readonly logs: PgLogs;
  /** Failed writes (`GET /health`, `svc_store_write_errors_total`), as the file store's. */
  readonly writeErrors: StoreWriteErrors;

  constructor(opts: PgRunStoreOptions) {
    this.#db = opts.db;
    this.#logDir = opts.logDir;
    this.#clock = opts.clock;
    this.#warn = opts.warn ?? (() => undefined);
    this.#saved = opts.onRecordSaved ?? (() => undefined);
    this.#liveness = opts.liveness;
    this.logs = new PgLogs(opts.db);
    this.#listing = new RunListing({
      db: opts.db,
      warn: this.#warn,
      ...(opts.maxCachedRuns === undefined ? {} : { maxCachedRuns: opts.maxCachedRuns }),
    });
    this.writeErrors = new StoreWriteErrors(opts.clock);
    this.#stops = new PgStopRequests(opts.db, opts.clock, this.#warn);
  }

  runLogPath(ref: RunRef, dagLogDir?: string): string {
    return runLogPathIn(dagLogDir ?? this.#logDir, ref);
  }

  /** Errors: already_exists for a taken id; not_found for a child whose root does not exist. */
  async createRun(record: DagRunRecord, snapshot: RunSnapshotData): Promise<void> {
    const logDir = dirname(record.log !== '' ? record.log : this.runLogPath(record));
    await this.#db.tx(async (q) => {
      if (record.parent !== undefined) {
        const root = await q.query(`SELECT 1 FROM trellis_runs WHERE ${WHERE_KEY} FOR SHARE`, [
          ...keyValues(keyOf(record.root)),
        ]);
        if (root.rowCount === 0) throw runNotFound(record.root);
      }
      const r = await q.query(INSERT_RUN, insertValues(record, snapshot, logDir));
      if (r.rowCount === 0) throw runTaken(record);
    });
    this.#saved(structuredClone(record));
  }

  /** Replaces the record in call order; a lower revision than the stored one is ignored. */
  saveRun(record: DagRunRecord): Promise<void> {
    const key = keyOfRecord(record);
    const values = [...keyValues(key), ...savedColumns(record)];
    return this.#saves.run(values.slice(0, 4).join('\0'), async () => {
      const r = await this.#db.query(
        `UPDATE trellis_runs SET status = $5, queue = $6, created_ms = $7, revision = $8,
         summary = $9, record = $10 WHERE ${WHERE_KEY} AND revision <= $8`,
        values,
      );
      if (r.rowCount === 0) await this.#mustExist(record);
      else this.#saved(JSON.parse(values[9] as string) as DagRunRecord); // as when called
    });
  }

  /** Compare and swap on the stored revision; false (nothing written) when it changed. */
  async saveRunIf(record: DagRunRecord, expectRevision: number): Promise<boolean> {
    const values = [...keyValues(keyOfRecord(record)), ...savedColumns(record), expectRevision];
    const r = await this.#db.query(
      `UPDATE trellis_runs SET status = $5, queue = $6, created_ms = $7, revision = $8,
       summary = $9, record = $10 WHERE ${WHERE_KEY} AND revision = $11`,
      values,
    );
    if (r.rowCount === 0) await this.#mustExist(record);
    else this.#saved(structuredClone(record));
    return r.rowCount === 1;
  }

  async #mustExist(record: DagRunRecord): Promise<void> {
    const root = record.parent === undefined ? undefined : record.root;
    await this.#row('1 AS x', record, root);
  }

  async #row<T>(cols: string, ref: RunRef, root?: RunRef): Promise<T> {
    const r = await this.#db.query(`SELECT ${cols} FROM trellis_runs WHERE ${WHERE_KEY}`, [
      ...keyValues(keyOf(ref, root)),
    ]);
    if (r.rows[0] === undefined) throw runNotFound(ref, root);
    return r.rows[0] as T;
  }

  async getRun(ref: RunRef, opts: RootOption = {}): Promise<DagRunRecord> {
    return (await this.#row<{ record: DagRunRecord }>('record', ref, opts.root)).record;
  }

  async getSnapshot(ref: RunRef, opts: RootOption = {}): Promise<RunSnapshotData> {
    return (await this.#row<{ snapshot: RunSnapshotData }>('snapshot', ref, opts.root)).snapshot;
  }

  async latestRun(dagName: string): Promise<DagRunRecord> {
    const r = await this.#db.query<{ record: DagRunRecord }>(
      `SELECT record FROM trellis_runs WHERE name = $1 AND NOT is_child ${NEWEST_FIRST} LIMIT 1`,
      [dagName],
    );
    if (r.rows[0] === undefined) throw runNotFound({ name: dagName, dagRunId: 'latest' });
    return r.rows[0].record;
  }

  /**
   * The summary of the DAG's most recently created top-level run (the DAG list's latest runs);
   * undefined when it never ran. Always read from the database: `maxStaleMs` is the file
   * store's allowance for its in-memory index and is met here.
   */
  async latestSummary(dagName: string, _maxStaleMs?: number): Promise<RunSummary | undefined> {
    const r = await this.#db.query<{ summary: RunSummary }>(
      `SELECT summary FROM trellis_runs WHERE name = $1 AND NOT is_child ${NEWEST_FIRST} LIMIT 1`,
      [dagName],
    );
    return r.rows[0]?.summary;
  }

  /**
   * Summaries newest first (the history index): from this process's memory, brought up to date
   * by one indexed query for what changed since the last listing (`RunListing`).
   */
  listRuns(filter: ListFilter = {}): Promise<RunSummary[]> {
    return this.#listing.list(filter);
  }

  /**
   * Text that changes whenever a run row of the DAG is written or deleted, by any process
   * (`RunListing.changeStamp`: one read of the change feed); undefined past the listing's
   * memory limit.
   */
  changeStamp(dagName: string): Promise<string | undefined> {
    return this.#listing.changeStamp(dagName);
  }

  /** The child runs under a root run, oldest first. Errors: not_found for the root. */
  async listChildren(root: RunRef): Promise<RunSummary[]> {
    await this.#row('1 AS x', root);
    const r = await this.#db.query<{ summary: RunSummary }>(
      `SELECT summary FROM trellis_runs WHERE root_name = $1 AND root_run_id = $2 AND is_child
       ORDER BY created_ms ASC NULLS FIRST, dag_run_id ASC`,
      [root.name, root.dagRunId],
    );
    return r.rows.map((x) => x.summary);
  }

  recorderFor(record: DagRunRecord): RunRecorder {
    return new PgRunRecorder({
      runLogPath: record.log !== '' ? record.log : this.runLogPath(record),
      logs: this.logs,
      save: (r) => this.saveRun(r),
      clock: this.#clock,
      warn: this.#warn,
    });
  }

  readLog(path: string, query: LogWindowQuery = {}): Promise<LogChunkData> {
    return this.logs.read(path, query);
  }

  followLog(
    path: string,
    fromLine: number,
    onLines: (lines: readonly string[], first: number) => void,
    onError: (e: Error) => void,
  ): LogFollowHandle {
    return followPgLog(this.logs, path, fromLine, onLines, onError);
  }

  /** Asks the process executing a run to stop it. Errors: not_found. */
  requestStop(ref: RunRef, opts: RootOption = {}): Promise<void> {
    return this.#stops.request(ref, opts.root);
  }

  /** True when a stop was requested for the run. Errors: not_found. */
  isStopRequested(ref: RunRef, opts: RootOption = {}): Promise<boolean> {
    return this.#stops.isRequested(ref, opts.root);
  }

  /** Calls `onStop` once when a stop is requested (polled); returns a disposer. */
  watchStop(ref: RunRef, opts: RootOption, onStop: () => void): () => void {
    return this.#stops.watch(ref, opts.root, onStop);
  }

  /** Running runs whose owner is gone (pg-orphaned-runs.ts). */
  findOrphanedRuns(): Promise<DagRunRecord[]> {
    return findPgOrphanedRuns(this.#db, this.#liveness);
  }

  /** Deletes a top-level run with its children and all their logs. Errors: not_found. */
  async deleteRun(ref: RunRef): Promise<void> {
    await this.#row('1 AS x', ref);
    await this.#db.tx(async (q) => {
      const dirs = await q.query<{ log_dir: string }>(
        `DELETE FROM trellis_runs WHERE root_name = $1 AND root_run_id = $2 RETURNING log_dir`,
        [ref.name, ref.dagRunId],
      );
      await this.logs.deleteDirs(
        q,
        dirs.rows.map((d) => d.log_dir),
      );
    });
  }

  /** Retention of one DAG: top-level runs ended over `days` ago, unless a child still runs. */
  deleteRunsOlderThan(dagName: string, days: number): Promise<number> {
    return deleteExpiredPgRuns(this.#retention, dagName, days);
  }

  /** Retention over the whole store (`trellis cleanup`, the scheduler's daily pass). */
  cleanupAll(days: RetentionDays): Promise<CleanupReport> {
    return cleanupPgStore(this.#retention, days);
  }

  get #retention(): PgRetentionDeps {
    return { db: this.#db, clock: this.#clock, deleteRun: (ref) => this.deleteRun(ref) };
  }
}
