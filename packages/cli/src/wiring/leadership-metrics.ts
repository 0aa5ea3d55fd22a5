import { registerLeadershipMetrics, type DatabaseHealth, type Metrics } from '@trellis/api';
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

/** How long `GET /health` waits for the database's `SELECT 1` before reporting no latency. */
const HEALTH_PING_LIMIT_MS = 2000;

/** `pingMs`, or undefined after `limitMs`: a partitioned database must not hold `/health`. */
const pingWithin = async (db: PgDb, limitMs: number): Promise<number | undefined> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), limitMs);
  });
  try {
    return await Promise.race([pingMs(db), late]);
  } finally {
    clearTimeout(timer);
  }
};

/** The pool's connections by state (`totalCount` counts those being opened too). */
const poolUse = (db: PgDb): DatabaseHealth['pool'] => ({
  size: db.pool.options.max,
  inUse: db.pool.totalCount - db.pool.idleCount,
  idle: db.pool.idleCount,
  waiting: db.pool.waitingCount,
});

/** The PostgreSQL store's part of `GET /health`: one round trip and the pool's use. */
export const databaseHealth = async (db: PgDb): Promise<DatabaseHealth> => ({
  latencyMs: (await pingWithin(db, HEALTH_PING_LIMIT_MS)) ?? null,
  pool: poolUse(db),
});

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
    pool: () => poolUse(db),
  });
