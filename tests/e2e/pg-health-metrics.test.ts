import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HealthResponse } from '@trellis/contract';
import { MIGRATION_LOCK_KEY, PgDb, migrationStatus } from '@trellis/store-pg';
import {
  parseExposition,
  sampleValue,
  startPostgres,
  type PrivatePostgres,
} from '@trellis/testkit';
import { roleOf, startPgInstance } from './support/pg-instance.js';
import { callApi, type StartAll } from './support/start-all.js';
import { expectPromtoolClean } from './support/promtool.js';

/**
 * Two `start-all` instances started together on one empty PostgreSQL database (issue 20 items 2
 * and 7): migrations applied once under the lock; then `/health` and `/metrics` of the leader and
 * the follower show leadership, lease age, database latency and pool use.
 */
let postgres: PrivatePostgres;
let databaseUrl: string;
let db: PgDb;
let root: string;
const instances: StartAll[] = [];

const POOL_SIZE = 4;
/**
 * Renewed every 0.5 s; a long TTL, as no instance is lost here: a lease age past it would mean a
 * leader that kept the lead without renewing, not a slow machine.
 */
const LEASE = { ttlMs: 20_000, renewMs: 500 } as const;
const LEASE_TTL_S = LEASE.ttlMs / 1000;
/** Patience for what the instances do on their own (an election, a renewal). */
const PATIENCE = { timeout: 30_000 } as const;

beforeAll(async () => {
  postgres = await startPostgres();
  databaseUrl = await postgres.createDatabase('trellis_health');
  db = new PgDb({ url: databaseUrl, poolSize: 2 });
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-health-'));
  mkdirSync(join(root, 'dags'));
});

afterAll(async () => {
  for (const s of instances) await s.stop().catch(() => undefined);
  await db.end();
  await postgres.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The `application_name` instance `n` connects with. */
const appOf = (n: number): string => `trellis_instance_${n}`;

const start = (n: number): Promise<StartAll> =>
  startPgInstance({
    root,
    n,
    databaseUrl: `${databaseUrl}?application_name=${appOf(n)}`, // its connections, by name
    lease: LEASE,
    env: { SVC_DATABASE_POOL_SIZE: String(POOL_SIZE) },
  }).then((s) => {
    instances.push(s);
    return s;
  });

/** Sessions waiting for an advisory lock (the migration lock, while the test holds it). */
const waitingForLock = async (): Promise<number> => {
  const r = await db.query<{ n: string }>(
    "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
  );
  return Number(r.rows[0]?.n);
};

const count = async (sql: string): Promise<number> =>
  Number((await db.query<{ n: string }>(sql)).rows[0]?.n);

/** The instances by role, once one leads and the other follows. */
const byRole = async (): Promise<{ leader: StartAll; follower: StartAll }> => {
  let roles: unknown[] = [];
  await expect
    .poll(async () => [...(roles = await Promise.all(instances.map(roleOf)))].sort(), PATIENCE)
    .toEqual(['follower', 'leader']);
  const leader = instances[roles.indexOf('leader')] as StartAll;
  const follower = instances[roles.indexOf('follower')] as StartAll;
  return { leader, follower };
};

const scrapeText = async (s: StartAll): Promise<string> =>
  (await fetch(`${s.url}/api/v2/metrics`)).text();

describe('two start-all instances started together on an empty database', () => {
  it('both wait on the migration lock, then both serve, with each migration applied once', async () => {
    const holder = await db.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const starting = Promise.all([start(1), start(2)]);
      starting.catch(() => undefined); // awaited below; a failure is reported there
      await expect.poll(waitingForLock, PATIENCE).toBe(2);
      await holder.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      await starting;
    } finally {
      holder.release();
    }
    for (const s of instances) {
      expect((await callApi(`${s.url}/api/v2`, 'GET', '/health')).status).toBe(200);
    }
    const status = await migrationStatus(db);
    expect(status.length).toBeGreaterThanOrEqual(4);
    expect(status.filter((m) => m.appliedAt === undefined)).toEqual([]);
    const rows = await db.query<{ version: number }>(
      'SELECT version FROM trellis_schema_migrations ORDER BY version',
    );
    expect(rows.rows.map((r) => r.version)).toEqual(status.map((m) => m.version));
    // the tables of the first and the last migration, each there once
    expect(
      await count(
        "SELECT count(*) AS n FROM pg_tables WHERE tablename IN ('trellis_runs', 'trellis_instances')",
      ),
    ).toBe(2);
    expect(await count('SELECT count(*) AS n FROM trellis_instances')).toBe(2);
  });
});

const healthOf = async (s: StartAll): Promise<HealthResponse> => {
  const r = await callApi(`${s.url}/api/v2`, 'GET', '/health');
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ status: 'healthy', version: expect.any(String) });
  return HealthResponse.parse(r.body); // the wire schema, database field included
};

/** What a pool of `database.poolSize` may report: no more connections than its size. */
const expectPoolWithinSize = (p: { inUse: number; idle: number }): void => {
  expect(p.inUse).toBeGreaterThanOrEqual(0);
  expect(p.idle).toBeGreaterThanOrEqual(0);
  expect(p.inUse + p.idle).toBeGreaterThanOrEqual(1); // the scrape's own SELECT 1 needed one
  expect(p.inUse + p.idle).toBeLessThanOrEqual(POOL_SIZE);
};

describe('health and metrics of the leader and the follower', () => {
  it('/health says leader (with a lease age within the TTL) or follower (without)', async () => {
    const { leader, follower } = await byRole();
    const l = await healthOf(leader);
    expect(l.role).toBe('leader');
    expect(l.leaseAgeSeconds).toBeGreaterThanOrEqual(0);
    expect(l.leaseAgeSeconds).toBeLessThan(LEASE_TTL_S);
    const f = await healthOf(follower);
    expect(f.role).toBe('follower');
    expect(f).not.toHaveProperty('leaseAgeSeconds');
  });

  it("the leader's lease age falls back at a renewal (the age of the last renewal, not of the lead)", async () => {
    const { leader } = await byRole();
    const age = async (): Promise<number> =>
      sampleValue(parseExposition(await scrapeText(leader)), 'svc_leader_lease_age_seconds') ?? -1;
    let previous = await age();
    await expect
      .poll(async () => {
        const now = await age();
        const fell = now < previous;
        previous = now;
        return fell;
      }, PATIENCE)
      .toBe(true);
  });

  it("/health reports the database's latency and the pool of database.poolSize", async () => {
    for (const s of instances) {
      const d = (await healthOf(s)).database;
      expect(d?.latencyMs).toBeGreaterThan(0);
      expect(d?.pool.size).toBe(POOL_SIZE);
      expect(d?.pool.waiting).toBe(0);
      expectPoolWithinSize(d?.pool ?? { inUse: -1, idle: -1 });
    }
  });

  it('/metrics shows the lead, the lease age, the latency and the pool on each', async () => {
    const { leader, follower } = await byRole();
    const l = parseExposition(await scrapeText(leader));
    expect(sampleValue(l, 'svc_leader')).toBe(1);
    expect(sampleValue(l, 'svc_leader_lease_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(l, 'svc_leader_lease_age_seconds')).toBeLessThan(LEASE_TTL_S);
    const f = parseExposition(await scrapeText(follower));
    expect(sampleValue(f, 'svc_leader')).toBe(0);
    expect(sampleValue(f, 'svc_leader_lease_age_seconds')).toBe(0); // 0 while following
    for (const m of [l, f]) {
      expect(sampleValue(m, 'svc_database_latency_seconds')).toBeGreaterThan(0); // -1: no answer
      expectPoolWithinSize({
        inUse: sampleValue(m, 'svc_database_pool_connections', { state: 'in_use' }) ?? -1,
        idle: sampleValue(m, 'svc_database_pool_connections', { state: 'idle' }) ?? -1,
      });
      expect(sampleValue(m, 'svc_leader_fenced_writes_total')).toBe(0);
    }
  });

  it('passes promtool check metrics but for the two gauges the spec names like counters', async () => {
    const { leader } = await byRole();
    expectPromtoolClean(await scrapeText(leader));
  });

  it('never opens more connections than database.poolSize (+1 heartbeat, +1 lease, +1 suspend-flag listener) under a burst', async () => {
    const burst = (s: StartAll) => Promise.all(Array.from({ length: 20 }, () => healthOf(s))); // a SELECT 1 each
    const answers = (await Promise.all(instances.map(burst))).flat();
    for (const a of answers) expectPoolWithinSize(a.database?.pool ?? { inUse: -1, idle: -1 });
    // idle connections stay open a while: those the burst opened are still counted here
    const opened = await db.query<{ app: string; n: string }>(
      `SELECT application_name AS app, count(*) AS n FROM pg_stat_activity
        WHERE application_name LIKE 'trellis_instance_%' GROUP BY 1 ORDER BY 1`,
    );
    const byApp = opened.rows.map((r) => [r.app, Number(r.n)] as const);
    expect(byApp.map(([app]) => app)).toEqual([appOf(1), appOf(2)]);
    // the pool, the heartbeat's and the scheduler lease's own connections, and the suspend
    // flags' LISTEN connection (docs/ha.md, sizing)
    for (const [, n] of byApp) expect(n).toBeLessThanOrEqual(POOL_SIZE + 3);
  });
});
