import { registerLeadershipMetrics, type Metrics } from '@trellis/api';
import type { PgDb } from '@trellis/store-pg';
import type { LeaderFacts } from './leader-lease.js';
import type { SchedulerStatus } from './scheduler-role.js';

/** The time of one `SELECT 1`, in ms; undefined when the database does not answer. */
const pingMs = async (db: PgDb): Promise<number | undefined> => {
  const t0 = performance.now();
  try {
    await db.query('SELECT 1');
    return performance.now() - t0;
  } catch {
    return undefined;
  }
};

/** Registers the leadership and database metrics of an instance on the PostgreSQL store. */
export const wireLeadershipMetrics = (
  metrics: Metrics,
  db: PgDb,
  scheduler: () => { status: SchedulerStatus; leader?: LeaderFacts } | undefined,
): void =>
  registerLeadershipMetrics(metrics.registry, {
    leader: () => scheduler()?.status.running() ?? false,
    leaseAgeMs: () => scheduler()?.status.leaseAgeMs(),
    fencedWrites: () => scheduler()?.leader?.fencedWrites() ?? 0,
    databaseLatencyMs: () => pingMs(db),
    pool: () => ({
      inUse: db.pool.totalCount - db.pool.idleCount,
      idle: db.pool.idleCount,
    }),
  });
