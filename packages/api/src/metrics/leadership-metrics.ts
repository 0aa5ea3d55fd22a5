import { Counter, Gauge, type Registry } from 'prom-client';

/** What the leadership and database metrics read (replicated coordinators, PostgreSQL store). */
export interface LeadershipSources {
  /** True while this instance leads (holds the lease). */
  readonly leader: () => boolean;
  /** Milliseconds since the leader last renewed its lease; undefined while following. */
  readonly leaseAgeMs: () => number | undefined;
  /** Fire claims refused because this instance's fencing token was stale, since start. */
  readonly fencedWrites: () => number;
  /** One round trip to the database (`SELECT 1`), in ms; undefined when it failed. */
  readonly databaseLatencyMs: () => Promise<number | undefined>;
  /** Connections of the pool by state. */
  readonly pool: () => { readonly inUse: number; readonly idle: number };
}

/**
 * The metrics of replicated coordinators (docs/metrics.md): leadership, lease age, database
 * latency and pool use. Registered only with the PostgreSQL store.
 */
export const registerLeadershipMetrics = (registry: Registry, s: LeadershipSources): void => {
  new Gauge({
    name: 'svc_leader',
    help: '1 while this instance leads cron, the queues, recovery and retention, else 0.',
    registers: [registry],
    collect() {
      this.set(s.leader() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_leader_lease_age_seconds',
    help: 'Seconds since the leader last renewed its lease (0 while following).',
    registers: [registry],
    collect() {
      this.set((s.leaseAgeMs() ?? 0) / 1000);
    },
  });
  new Counter({
    name: 'svc_leader_fenced_writes_total',
    help: 'Writes refused because their fencing token was stale (a deposed leader).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(s.fencedWrites());
    },
  });
  new Gauge({
    name: 'svc_database_latency_seconds',
    help: 'Round trip of a trivial query to PostgreSQL at scrape time (-1 when it failed).',
    registers: [registry],
    async collect() {
      const ms = await s.databaseLatencyMs();
      this.set(ms === undefined ? -1 : ms / 1000);
    },
  });
  new Gauge({
    name: 'svc_database_pool_connections',
    help: 'Connections of the PostgreSQL pool, by state (in_use, idle).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const p = s.pool();
      this.set({ state: 'in_use' }, p.inUse);
      this.set({ state: 'idle' }, p.idle);
    },
  });
};
