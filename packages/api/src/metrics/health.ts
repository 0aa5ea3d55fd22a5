/** What {@link createHealthProbe} checks. */
export interface HealthProbeOptions {
  /** The store's problem, if any (the data directory must be writable); undefined when fine. */
  readonly storeProblem: () => Promise<string | undefined>;
  /** Whether the scheduler answers; absent when this process runs none. */
  readonly schedulerAlive?: () => boolean;
  /**
   * With replicated coordinators (the PostgreSQL store): whether this instance leads (cron,
   * queues, recovery, retention) or follows, and its lease's age; absent otherwise.
   */
  readonly leadership?: () => { readonly leader: boolean; readonly leaseAgeMs?: number };
  /** With the PostgreSQL store: one round trip's time and the pool's use; absent otherwise. */
  readonly database?: () => Promise<DatabaseHealth>;
}

/** The PostgreSQL store's part of `GET /health` (beyond the spec). */
export interface DatabaseHealth {
  /** One `SELECT 1` round trip (pool wait included), in ms; null when it failed or timed out. */
  readonly latencyMs: number | null;
  /** The pool's connections: `size` is `database.poolSize`; `waiting` counts queued queries. */
  readonly pool: {
    readonly size: number;
    readonly inUse: number;
    readonly idle: number;
    readonly waiting: number;
  };
}

/** A probe's verdict: `error` names every failing part; absent means healthy. */
export interface HealthVerdict {
  readonly error?: string;
  /** `leader` or `follower` with replicated coordinators (beyond the spec). */
  readonly role?: 'leader' | 'follower';
  /** Seconds since the leader last renewed its lease (the leader only; beyond the spec). */
  readonly leaseAgeSeconds?: number;
  /** The PostgreSQL store's latency and pool (beyond the spec). */
  readonly database?: DatabaseHealth;
}

const roleOf = (l: HealthProbeOptions['leadership']): Omit<HealthVerdict, 'error'> => {
  if (!l) return {};
  const { leader, leaseAgeMs } = l();
  return {
    role: leader ? 'leader' : 'follower',
    ...(leader && leaseAgeMs !== undefined ? { leaseAgeSeconds: leaseAgeMs / 1000 } : {}),
  };
};

const isAlive = (check: () => boolean): boolean => {
  try {
    return check();
  } catch {
    return false;
  }
};

const NO_POOL = { size: 0, inUse: 0, idle: 0, waiting: 0 } as const;

/** The database's facts; a check that throws reports no latency and an empty pool. */
const databaseOf = (check: () => Promise<DatabaseHealth>): Promise<DatabaseHealth> =>
  check().catch(() => ({ latencyMs: null, pool: NO_POOL }));

/**
 * The health probe behind `GET /health` (`HttpDeps.health`; spec: System, Errors "503 unhealthy,
 * scheduler not responding"): asks the store (its data directory must be writable) and the
 * scheduler when one is given. Never throws; both failures are reported together.
 */
export const createHealthProbe =
  (options: HealthProbeOptions): (() => Promise<HealthVerdict>) =>
  async () => {
    const problems: string[] = [];
    const store = await options.storeProblem().catch((e: unknown) => String(e));
    if (store !== undefined) problems.push(store);
    if (options.schedulerAlive && !isAlive(options.schedulerAlive)) {
      problems.push('the scheduler is not responding');
    }
    const facts = {
      ...roleOf(options.leadership),
      ...(options.database ? { database: await databaseOf(options.database) } : {}),
    };
    return problems.length === 0 ? facts : { error: problems.join('; '), ...facts };
  };

/** `GET /health`'s answer (spec: System): 200 healthy, or 503 with the verdict's `error`. */
export interface HealthAnswer {
  readonly status: 200 | 503;
  readonly body: {
    readonly status: 'healthy' | 'unhealthy';
    readonly version: string;
    readonly uptime: number;
    readonly timestamp: string;
    readonly error?: string;
    readonly role?: 'leader' | 'follower';
    readonly leaseAgeSeconds?: number;
    readonly database?: DatabaseHealth;
  };
}

/** The answer to `GET /health` for a probe's verdict, `version` and the process's start. */
export const healthAnswer = (
  verdict: HealthVerdict,
  version: string,
  startedAt: Date,
  now: Date,
): HealthAnswer => ({
  status: verdict.error ? 503 : 200,
  body: {
    status: verdict.error ? 'unhealthy' : 'healthy',
    version,
    uptime: Math.max(0, Math.floor((now.getTime() - startedAt.getTime()) / 1000)),
    timestamp: now.toISOString(),
    ...(verdict.error ? { error: verdict.error } : {}),
    ...(verdict.role ? { role: verdict.role } : {}),
    ...(verdict.leaseAgeSeconds !== undefined ? { leaseAgeSeconds: verdict.leaseAgeSeconds } : {}),
    ...(verdict.database ? { database: verdict.database } : {}),
  },
});
