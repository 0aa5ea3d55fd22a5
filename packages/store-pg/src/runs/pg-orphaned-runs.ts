import { RunStatus } from '@trellis/core';
import type { DagRunRecord } from '@trellis/spec';
import { isOrphanedOwner } from '@trellis/store';
import type { PgDb } from '../db/pg-db.js';
import type { InstanceLiveness } from '../instances/instance-heartbeat.js';

/**
 * Running runs whose owner is gone (`PgRunStore.findOrphanedRuns`): no owner, a local owner on
 * this host whose process ended (`isOrphanedOwner`), or, with instance liveness, a local owner on
 * any host whose heartbeat row was not seen for `staleAfterMs` (judged only while this process's
 * own beats are steady; an owner with no row at all, a process of an earlier version, is left to
 * the pid probe). Runs on workers are the coordinator's to judge (the lost-worker rule).
 */
export const findPgOrphanedRuns = async (
  db: PgDb,
  liveness: InstanceLiveness | undefined,
): Promise<DagRunRecord[]> => {
  const judge = liveness?.canJudge() === true;
  // `last_seen` is null when the owner has no row: a process of a version before instance
  // liveness (a rolling upgrade), which only the pid probe can judge
  const r = await db.query<{ record: DagRunRecord; last_seen: Date | null; seen: boolean }>(
    `SELECT r.record, i.last_seen,
       COALESCE(i.last_seen > now() - $2 * interval '1 millisecond', false) AS seen
     FROM trellis_runs r LEFT JOIN trellis_instances i
       ON i.host = r.record->'owner'->>'host'
      AND i.pid::text = r.record->'owner'->>'pid'
      AND i.process_start = r.record->'owner'->>'processStart'
     WHERE r.status = $1`,
    [RunStatus.Running, liveness?.staleAfterMs ?? 0],
  );
  return r.rows
    .filter(({ record, last_seen, seen }) => {
      if (isOrphanedOwner(record.owner)) return true;
      return judge && record.owner?.workerId === 'local' && last_seen !== null && !seen;
    })
    .map((x) => x.record);
};
