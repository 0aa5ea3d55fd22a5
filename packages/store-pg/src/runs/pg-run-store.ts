import { dirname } from 'node:path';
import { badRequest, RunStatus, type Clock } from '@trellis/core';
import type { RunRecorder } from '@trellis/engine';
import type {
  LogChunkData,
  LogFollowHandle,
  LogWindowQuery,
  RunListFilter,
  RunSnapshotData,
} from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { isOrphanedOwner, runLogPathIn, type RunSummary } from '@trellis/store';
import type { PgDb } from '../db/pg-db.js';
import { followPgLog } from '../logs/pg-log-follow.js';
import { PgLogs } from '../logs/pg-logs.js';
import { PgRunRecorder } from '../logs/pg-recorder.js';
import {
  INSERT_RUN,
  insertValues,
  isExpired,
  keyOf,
  keyOfRecord,
  keyValues,
  listWhere,
  NEWEST_FIRST,
  runNotFound,
  runTaken,
  savedColumns,
  WHERE_KEY,
} from './run-rows.js';
import { SerialChains } from './serial-chains.js';

export interface PgRunStoreOptions {
  readonly db: PgDb;
  /** The folder log names are made under (the names the API shows; the lines are rows). */
  readonly logDir: string;
  readonly clock: Clock;
  readonly warn?: (message: string) => void;
}

interface RootOption {
  readonly root?: RunRef | undefined;
}

const DAY_MS = 86_400_000;
/** How often `watchStop` looks for a stop request. */
const STOP_POLL_MS = 500;

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
  readonly logs: PgLogs;

  constructor(opts: PgRunStoreOptions) {
    this.#db = opts.db;
    this.#logDir = opts.logDir;
    this.#clock = opts.clock;
    this.#warn = opts.warn ?? (() => undefined);
    this.logs = new PgLogs(opts.db);
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

  /** Summaries newest first (the history index: indexed columns, never the records). */
  async listRuns(
    filter: RunListFilter & { includeChildren?: boolean } = {},
  ): Promise<RunSummary[]> {
    const { where, values } = listWhere(filter);
    const limit =
      filter.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
    const r = await this.#db.query<{ summary: RunSummary }>(
      `SELECT summary FROM trellis_runs WHERE ${where} ${NEWEST_FIRST}${limit}`,
      values,
    );
    return r.rows.map((x) => x.summary);
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

  async requestStop(ref: RunRef, opts: RootOption = {}): Promise<void> {
    const r = await this.#db.query(
      `UPDATE trellis_runs SET stop_requested_at = COALESCE(stop_requested_at, $5) WHERE ${WHERE_KEY}`,
      [...keyValues(keyOf(ref, opts.root)), this.#clock.now()],
    );
    if (r.rowCount === 0) throw runNotFound(ref, opts.root);
  }

  async isStopRequested(ref: RunRef, opts: RootOption = {}): Promise<boolean> {
    const row = await this.#row<{ stop: Date | null }>('stop_requested_at AS stop', ref, opts.root);
    return row.stop !== null;
  }

  /** Calls `onStop` once when a stop is requested (polled); returns a disposer. */
  watchStop(ref: RunRef, opts: RootOption, onStop: () => void): () => void {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const check = (): void => {
      this.isStopRequested(ref, opts).then(
        (stop) => {
          if (done) return;
          if (!stop) return void (timer = setTimeout(check, STOP_POLL_MS));
          done = true;
          try {
            onStop();
          } catch (e) {
            this.#warn(`stop handler of run ${ref.name}/${ref.dagRunId} failed: ${String(e)}`);
          }
        },
        () => {
          if (!done) timer = setTimeout(check, STOP_POLL_MS); // the database away: try again
        },
      );
    };
    check();
    return () => {
      done = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }

  /** Running runs whose local owner process is gone (see `isOrphanedOwner`). */
  async findOrphanedRuns(): Promise<DagRunRecord[]> {
    const r = await this.#db.query<{ record: DagRunRecord }>(
      'SELECT record FROM trellis_runs WHERE status = $1',
      [RunStatus.Running],
    );
    return r.rows.map((x) => x.record).filter((rec) => isOrphanedOwner(rec.owner));
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
  async deleteRunsOlderThan(dagName: string, days: number): Promise<number> {
    if (!(days >= 0))
      throw badRequest(`invalid retention ${days}: use a number of days of 0 or more`);
    const cutoffMs = this.#clock.now().getTime() - days * DAY_MS;
    const r = await this.#db.query<{ summary: RunSummary; busy: boolean }>(
      `SELECT r.summary, EXISTS (SELECT 1 FROM trellis_runs c WHERE c.is_child
         AND c.root_name = r.name AND c.root_run_id = r.dag_run_id AND c.status IN (1, 5)) AS busy
       FROM trellis_runs r WHERE r.name = $1 AND NOT r.is_child AND r.status NOT IN (1, 5)`,
      [dagName],
    );
    let deleted = 0;
    for (const row of r.rows) {
      if (row.busy || !isExpired(row.summary, cutoffMs)) continue;
      await this.deleteRun(row.summary);
      deleted++;
    }
    return deleted;
  }
}
