import { dirname } from 'node:path';
import type { RunSnapshotData } from '@trellis/services';
import type { DagRunRecord } from '@trellis/spec';
import type { PgDb } from '../db/pg-db.js';
import { insertValues, keyOfRecord, keyValues, WHERE_KEY } from '../runs/run-rows.js';
import type { RunOutcome } from './move-report.js';

/**
 * A run row written as `PgRunStore.createRun` writes it, or, when the row exists with a lower
 * revision, replaced by it; nothing when the stored one is as new. `RETURNING` says which.
 */
const UPSERT_RUN = `INSERT INTO trellis_runs (root_name, root_run_id, name, dag_run_id,
  status, queue, created_ms, revision, summary, record, is_child, snapshot, log_dir,
  stop_requested_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
  ON CONFLICT (root_name, root_run_id, name, dag_run_id) DO UPDATE SET
    status = EXCLUDED.status, queue = EXCLUDED.queue, created_ms = EXCLUDED.created_ms,
    revision = EXCLUDED.revision, summary = EXCLUDED.summary, record = EXCLUDED.record,
    snapshot = EXCLUDED.snapshot, log_dir = EXCLUDED.log_dir,
    stop_requested_at = COALESCE(trellis_runs.stop_requested_at, EXCLUDED.stop_requested_at)
  WHERE trellis_runs.revision < EXCLUDED.revision
  RETURNING (xmax = 0) AS inserted`;

/** The folder a run's logs are in: its record's `log`, else the store's layout. */
export const logDirOfRecord = (record: DagRunRecord, fallbackRunLog: string): string =>
  dirname(record.log !== '' ? record.log : fallbackRunLog);

/** The stored revision of the record's run, undefined when the database has no such run. */
export const storedRevision = async (
  db: PgDb,
  record: DagRunRecord,
): Promise<number | undefined> => {
  const r = await db.query<{ revision: string }>(
    `SELECT revision FROM trellis_runs WHERE ${WHERE_KEY}`,
    keyValues(keyOfRecord(record)),
  );
  return r.rows[0] === undefined ? undefined : Number(r.rows[0].revision);
};

/** Writes the run row (see `UPSERT_RUN`); `stopAt` when a stop was requested. */
export const upsertRun = async (
  db: PgDb,
  row: {
    record: DagRunRecord;
    snapshot: RunSnapshotData;
    logDir: string;
    stopAt: Date | undefined;
  },
): Promise<RunOutcome> => {
  const r = await db.query<{ inserted: boolean }>(UPSERT_RUN, [
    ...insertValues(row.record, row.snapshot, row.logDir),
    row.stopAt ?? null,
  ]);
  if (r.rows[0] === undefined) return 'already';
  return r.rows[0].inserted ? 'added' : 'updated';
};
