import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError, ErrorCode, type Clock } from '@trellis/core';
import type { RunRef } from '@trellis/spec';
import { walkRuns, type FsRunStore, type WalkedRun } from '@trellis/store';
import type { PgDb } from '../db/pg-db.js';
import { copyLogIn } from './copy-log-in.js';
import { emptyReport, isSettled, type KindCount, type MoveReport } from './move-report.js';
import { copySuspendFlagsIn } from './suspend-flags-move.js';
import { logDirOfRecord, storedRevision, upsertRun } from './run-upsert.js';

export interface FilesToPgOptions {
  /** The file home's store (read only). */
  readonly files: FsRunStore;
  /** Its data folder (`paths.dataDir`): where the runs are walked. */
  readonly dataDir: string;
  /** The database, migrated. */
  readonly db: PgDb;
  readonly clock: Clock;
  /** Runs copied at once (each on its own connection). @default 4 */
  readonly concurrency?: number;
  /** Called after each top-level run (with its children) is done. */
  readonly onProgress?: (report: MoveReport) => void;
}

/** A child's ref for reading it under its root: the file store finds children by id. */
const CHILD_NAME = '.child';

/** The logs in a run's log folder (`run.log`, `<step>.out`, `.err`) and which are marked incomplete. */
const logsIn = async (dir: string): Promise<{ name: string; marked: boolean }[]> => {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const set = new Set(names);
  return names
    .filter((n) => !n.startsWith('.') && /\.(log|out|err)$/.test(n))
    .map((name) => ({ name, marked: set.has(`.${name}.truncated`) }));
};

const count = (c: KindCount, outcome: keyof KindCount, n = 1): void => {
  c[outcome] += n;
};

/**
 * Copies one run (top-level or child) into the database, logs first and the run row last: the
 * row is the mark that the run is complete there, so a copy cut midway (killed) is taken up
 * again by the next pass. A run the database has at the same revision and that is settled is
 * skipped without reading its logs.
 */
const copyRun = async (
  o: FilesToPgOptions,
  report: MoveReport,
  ref: RunRef,
  root: RunRef | undefined,
): Promise<void> => {
  const opts = root === undefined ? {} : { root };
  const record = await o.files.getRun(ref, opts);
  const kind = root === undefined ? report.runs : report.childRuns;
  const logDir = logDirOfRecord(record, o.files.runLogPath(record));
  const logs = await logsIn(logDir);
  const stored = await storedRevision(o.db, record);
  if (stored !== undefined && stored >= record.revision && isSettled(record.status)) {
    count(kind, 'already');
    count(report.logs, 'already', logs.length);
    return;
  }
  for (const log of logs) {
    const path = join(logDir, log.name);
    const reason = log.marked
      ? (await o.files.readLog(path, { head: 1 })).truncatedReason
      : undefined;
    report.logLines += await copyLogIn(o.db, path, reason);
    count(report.logs, stored === undefined ? 'added' : 'updated');
  }
  const outcome = await upsertRun(o.db, {
    record,
    snapshot: await o.files.getSnapshot(ref, opts),
    logDir,
    stopAt: o.files.isStopRequested(ref, opts) ? o.clock.now() : undefined,
  });
  count(kind, outcome);
  if (outcome !== 'already' && record.status === 5) report.queued++;
};

/** The database gone stops the pass (every other run would fail alike); anything else is listed. */
const note = (report: MoveReport, run: string, e: unknown): void => {
  if (AppError.is(e) && e.code === ErrorCode.ServiceUnavailable) throw e;
  report.failed.push({ run, reason: (e as Error).message });
};

const copyTree = async (o: FilesToPgOptions, report: MoveReport, run: WalkedRun): Promise<void> => {
  const label = `${run.ref.name}/${run.ref.dagRunId}`;
  try {
    await copyRun(o, report, run.ref, undefined);
  } catch (e) {
    note(report, label, e);
    return;
  }
  for (const id of run.childIds) {
    try {
      await copyRun(o, report, { name: CHILD_NAME, dagRunId: id }, run.ref);
    } catch (e) {
      note(report, `${label} child ${id}`, e);
    }
  }
};

/**
 * `trellis migrate store --to postgres`: copies every run of a file home (record with node
 * statuses, DAG snapshot, stop request, child runs, run and step logs) and the DAGs' suspend
 * flags into the PostgreSQL store, idempotently: a second pass adds nothing and counts everything as already there, a
 * run changed since (higher revision, or still running) is copied again. The history index and
 * the queue ledger are the runs' rows (indexed columns), so copying the runs copies them.
 * Streams: the home is walked folder by folder, logs are read in batches of lines.
 * A failure of the database (`service_unavailable`) stops the pass; a bad run is listed in
 * `failed` and the rest is copied.
 */
export const copyFilesToPg = async (o: FilesToPgOptions): Promise<MoveReport> => {
  const report = emptyReport();
  const runs = walkRuns(o.dataDir);
  const worker = async (): Promise<void> => {
    for (;;) {
      const next = await runs.next();
      if (next.done === true) return;
      await copyTree(o, report, next.value);
      o.onProgress?.(report);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 4 }, worker));
  await copySuspendFlagsIn(o.db, o.dataDir, report.suspendFlags);
  return report;
};
