import { badRequest, type Clock } from '@trellis/core';
import type { CleanupReport, RetentionDays, RunSummary } from '@trellis/store';
import type { PgDb } from '../db/pg-db.js';
import { isExpired } from './run-rows.js';

const DAY_MS = 86_400_000;

/** What retention needs from the store besides the database. */
export interface PgRetentionDeps {
  readonly db: PgDb;
  readonly clock: Clock;
  readonly deleteRun: (ref: RunSummary) => Promise<void>;
}

/** Retention of one DAG: top-level runs ended over `days` ago, unless a child still runs. */
export const deleteExpiredPgRuns = async (
  deps: PgRetentionDeps,
  dagName: string,
  days: number,
): Promise<number> => {
  if (!(days >= 0))
    throw badRequest(`invalid retention ${days}: use a number of days of 0 or more`);
  const cutoffMs = deps.clock.now().getTime() - days * DAY_MS;
  const r = await deps.db.query<{ summary: RunSummary; busy: boolean }>(
    `SELECT r.summary, EXISTS (SELECT 1 FROM trellis_runs c WHERE c.is_child
       AND c.root_name = r.name AND c.root_run_id = r.dag_run_id AND c.status IN (1, 5)) AS busy
     FROM trellis_runs r WHERE r.name = $1 AND NOT r.is_child AND r.status NOT IN (1, 5)`,
    [dagName],
  );
  let deleted = 0;
  for (const row of r.rows) {
    if (row.busy || !isExpired(row.summary, cutoffMs)) continue;
    await deps.deleteRun(row.summary);
    deleted++;
  }
  await pruneTombstones(deps.db);
  return deleted;
};

/**
 * Drops the tombstones of runs deleted over an hour ago (migrations/003_runs_change_feed.sql),
 * raising the floor to the newest one dropped: a process whose listing last read before it
 * reads its whole history again instead of missing a deletion.
 */
export const pruneTombstones = async (db: PgDb): Promise<void> => {
  await db.query(
    `WITH gone AS (DELETE FROM trellis_runs_gone WHERE deleted_at < now() - interval '1 hour'
       RETURNING changed_xid)
     UPDATE trellis_runs_gone_floor SET xid = GREATEST(xid, (SELECT max(changed_xid) FROM gone))
     WHERE EXISTS (SELECT 1 FROM gone)`,
  );
};

/**
 * Retention over the whole store (`trellis cleanup`, the scheduler's daily pass), as the file
 * store's `cleanupAll`: logs are rows deleted with their runs, so no log folder is left over.
 */
export const cleanupPgStore = async (
  deps: PgRetentionDeps,
  days: RetentionDays,
): Promise<CleanupReport> => {
  const names = await deps.db.query<{ name: string }>(
    'SELECT DISTINCT name FROM trellis_runs WHERE NOT is_child ORDER BY name',
  );
  const deletedRuns: Record<string, number> = {};
  let totalRuns = 0;
  for (const { name } of names.rows) {
    const d = typeof days === 'number' ? days : await days(name);
    const n = await deleteExpiredPgRuns(deps, name, d);
    if (n > 0) deletedRuns[name] = n;
    totalRuns += n;
  }
  return { deletedRuns, totalRuns, orphanedLogFolders: 0 };
};
