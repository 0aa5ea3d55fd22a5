import { basename, dirname, join } from 'node:path';
import { AppError, ErrorCode } from '@trellis/core';
import type { RunSnapshotData } from '@trellis/services';
import type { DagRunRecord, RunRef } from '@trellis/spec';
import { runLogPathIn, type FsRunStore } from '@trellis/store';
import type { PgDb } from '../db/pg-db.js';
import { exportLog, logsInDir } from './log-export.js';
import { emptyReport, isSettled, type MoveReport } from './move-report.js';
import { relocateRecord } from './relocate-record.js';
import { exportSuspendFlags } from './suspend-flags-move.js';

export interface PgToFilesOptions {
  readonly db: PgDb;
  /** The file home's store written into (`<out>/data`, `<out>/logs`). */
  readonly files: FsRunStore;
  /** Its log folder: exported logs go to `<logDir>/<dag>/<id>/`. */
  readonly logDir: string;
  /** Runs written at once. @default 4 */
  readonly concurrency?: number;
  readonly onProgress?: (report: MoveReport) => void;
}

interface RunRow {
  readonly record: DagRunRecord;
  readonly snapshot: RunSnapshotData;
  readonly log_dir: string;
  readonly stop: Date | null;
}

/** Top-level runs fetched per query (records and snapshots in memory at once). */
const PAGE_RUNS = 100;
const COLUMNS = 'record, snapshot, log_dir, stop_requested_at AS stop';

const rootsAfter = async (db: PgDb, after: RunRef | undefined): Promise<RunRow[]> => {
  const r = await db.query<RunRow>(
    `SELECT ${COLUMNS} FROM trellis_runs WHERE NOT is_child
     ${after === undefined ? '' : 'AND (root_name, root_run_id) > ($1, $2)'}
     ORDER BY root_name, root_run_id LIMIT ${PAGE_RUNS}`,
    after === undefined ? [] : [after.name, after.dagRunId],
  );
  return r.rows;
};

const childrenOf = async (db: PgDb, root: RunRef): Promise<RunRow[]> => {
  const r = await db.query<RunRow>(
    `SELECT ${COLUMNS} FROM trellis_runs WHERE root_name = $1 AND root_run_id = $2 AND is_child
     ORDER BY created_ms ASC NULLS FIRST, dag_run_id ASC`,
    [root.name, root.dagRunId],
  );
  return r.rows;
};

/** The exported run's revision, undefined when the file home does not have it. */
const revisionIn = async (
  o: PgToFilesOptions,
  ref: RunRef,
  root?: RunRef,
): Promise<number | undefined> => {
  try {
    return (await o.files.getRun(ref, root === undefined ? {} : { root })).revision;
  } catch (e) {
    if (AppError.is(e) && e.code === ErrorCode.NotFound) return undefined;
    throw e;
  }
};

/**
 * One run out to the file home: logs first (each renamed into place), the record last, so a cut
 * export is taken up again by the next pass; a run the home has at the same revision is skipped.
 */
const exportRun = async (o: PgToFilesOptions, report: MoveReport, row: RunRow): Promise<void> => {
  const rec = row.record;
  const root = rec.parent === undefined ? undefined : rec.root;
  const kind = root === undefined ? report.runs : report.childRuns;
  const logs = await logsInDir(o.db, row.log_dir);
  const have = await revisionIn(o, rec, root);
  if (have !== undefined && have >= rec.revision && isSettled(rec.status)) {
    kind.already++;
    report.logs.already += logs.length;
    return;
  }
  const toDir = dirname(runLogPathIn(o.logDir, rec));
  for (const log of logs) {
    report.logLines += await exportLog(o.db, log, join(toDir, basename(log.path)));
    report.logs[have === undefined ? 'added' : 'updated']++;
  }
  const moved = relocateRecord(rec, row.log_dir, toDir);
  if (have === undefined) await o.files.createRun(moved, row.snapshot);
  else await o.files.saveRun(moved);
  if (row.stop !== null) await o.files.requestStop(rec, root === undefined ? {} : { root });
  kind[have === undefined ? 'added' : 'updated']++;
  if (rec.status === 5) report.queued++;
};

const note = (report: MoveReport, run: string, e: unknown): void => {
  if (AppError.is(e) && e.code === ErrorCode.ServiceUnavailable) throw e;
  report.failed.push({ run, reason: (e as Error).message });
};

/** A top-level run and its children, in that order (a child needs its root in the file store). */
const exportTree = async (o: PgToFilesOptions, report: MoveReport, row: RunRow): Promise<void> => {
  const ref = { name: row.record.name, dagRunId: row.record.dagRunId };
  const label = `${ref.name}/${ref.dagRunId}`;
  try {
    await exportRun(o, report, row);
    for (const child of await childrenOf(o.db, ref))
      await exportRun(o, report, child).catch((e: unknown) =>
        note(report, `${label} child ${child.record.dagRunId}`, e),
      );
  } catch (e) {
    note(report, label, e);
  }
};

/**
 * `trellis migrate store --to files`: writes every run of the PostgreSQL store (records, DAG
 * snapshots, stop requests, child runs, logs) and the DAGs' suspend flags into a file home that
 * the file store reads (a backup, or a move back to files), paging through the database (bounded
 * memory), four top-level runs at once. Idempotent as `copyFilesToPg`: a second pass writes
 * nothing new.
 */
export const exportPgToFiles = async (o: PgToFilesOptions): Promise<MoveReport> => {
  const report = emptyReport();
  let after: RunRef | undefined;
  for (;;) {
    const page = await rootsAfter(o.db, after);
    if (page.length === 0) {
      await exportSuspendFlags(o.db, o.files.dataDir, report.suspendFlags);
      return report;
    }
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let row = page[next++]; row !== undefined; row = page[next++]) {
        await exportTree(o, report, row);
        o.onProgress?.(report);
      }
    };
    await Promise.all(Array.from({ length: o.concurrency ?? 4 }, worker));
    const last = page[page.length - 1] as RunRow;
    after = { name: last.record.name, dagRunId: last.record.dagRunId };
  }
};
