import { beforeAll, describe, expect, it } from 'vitest';
import type { PgDb } from '../db/pg-db.js';
import { useMigratedPg } from '../../test/support/migrated-pg.js';
import { PgLease } from './pg-lease.js';
import { PgScheduleFires } from './schedule-fires.js';

const pools = useMigratedPg({ pools: 1, poolSize: 4 });
let db: PgDb;
beforeAll(() => {
  db = pools.db(0);
});

describe('PgLease', () => {
  it('is held by one holder at a time, taken over once expired with a higher fencing token', async () => {
    const a = new PgLease({ db, name: 'scheduler', holder: 'a', ttlMs: 60_000 });
    const b = new PgLease({ db, name: 'scheduler', holder: 'b', ttlMs: 60_000 });
    const [x, y] = await Promise.all([a.tryAcquire(), b.tryAcquire()]);
    expect([x, y].filter(Boolean)).toHaveLength(1);
    const [held, other] = x ? [a, b] : [b, a];
    const token = held.token ?? 0;
    expect(await held.renew()).toBe(true);
    expect(await other.tryAcquire()).toBe(false);
    // the holder's lease runs out (as when it is frozen): the other takes it, token raised
    await db.query("UPDATE trellis_leases SET expires_at = now() - interval '1 second'");
    expect(await other.tryAcquire()).toBe(true);
    expect(other.token).toBe(token + 1);
    expect(await held.renew()).toBe(false);
    expect(held.token).toBeUndefined();
    expect(await other.holder()).toBe(x ? 'b' : 'a');
    await other.release();
    expect(await held.holder()).toBeUndefined();
    // after a release, tokens still only grow: whoever takes it next (the releaser too)
    expect(await other.tryAcquire()).toBe(true);
    expect(other.token).toBe(token + 2);
  });
});

describe('PgScheduleFires', () => {
  it('lets one instance claim a fire time, and remembers the last fire', async () => {
    const one = new PgScheduleFires(db, 'one');
    const two = new PgScheduleFires(db, 'two');
    const at = new Date('2026-01-02T03:04:00.000Z');
    const claims = await Promise.all([one.claim('etl', at), two.claim('etl', at)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await one.claim('etl', new Date(at.getTime() + 60_000))).toBe(true);
    expect((await two.lastFire('etl'))?.toISOString()).toBe('2026-01-02T03:05:00.000Z');
    expect(await two.lastFire('other')).toBeUndefined();
    // each DAG's own last fire, since a floor (a new leader resumes each from its own)
    await one.claim('stop:etl', at);
    await one.claim('old', new Date('2025-12-31T00:00:00.000Z'));
    const each = await two.lastFiresSince(new Date('2026-01-01T00:00:00.000Z'));
    expect(Object.fromEntries([...each].map(([k, d]) => [k, d.toISOString()]))).toEqual({
      etl: '2026-01-02T03:05:00.000Z',
      'stop:etl': '2026-01-02T03:04:00.000Z',
    });
  });
});

describe('PgScheduleFires.claimFenced', () => {
  it('records a fire once, and never under a stale token', async () => {
    const a = new PgLease({ db, name: 'leader-f', holder: 'fa', ttlMs: 60_000 });
    const b = new PgLease({ db, name: 'leader-f', holder: 'fb', ttlMs: 60_000 });
    expect(await a.tryAcquire()).toBe(true);
    const tokenA = a.token ?? 0;
    // these fire times are long past: no pruning here (the next test prunes)
    const firesA = new PgScheduleFires(db, 'fa', { everyMs: Number.POSITIVE_INFINITY });
    const firesB = new PgScheduleFires(db, 'fb', { everyMs: Number.POSITIVE_INFINITY });
    const at = new Date('2026-01-01T00:01:00Z');
    const fence = { lease: 'leader-f', token: tokenA };
    expect(await firesA.claimFenced('fenced-dag', at, fence)).toBe('claimed');
    expect(await firesA.claimFenced('fenced-dag', at, fence)).toBe('taken');
    // a's lease runs out (frozen) and b takes it: a's next claim, with its old token, is refused
    await db.query(
      "UPDATE trellis_leases SET expires_at = now() - interval '1 second' WHERE name = 'leader-f'",
    );
    expect(await b.tryAcquire()).toBe(true);
    const next = new Date('2026-01-01T00:02:00Z');
    expect(await firesA.claimFenced('fenced-dag', next, fence)).toBe('fenced');
    expect(
      await firesB.claimFenced('fenced-dag', next, { lease: 'leader-f', token: b.token ?? 0 }),
    ).toBe('claimed');
    const rows = await db.query<{ fired_by: string }>(
      "SELECT fired_by FROM trellis_schedule_fires WHERE dag_name = 'fenced-dag' ORDER BY fire_at",
    );
    expect(rows.rows.map((r) => r.fired_by)).toEqual(['fa', 'fb']);
    expect((await firesA.lastFireOfAll())?.getTime()).toBeGreaterThanOrEqual(next.getTime());
  });

  it('prunes fires older than keepMs after a claim, keeping the newest of all', async () => {
    const lease = new PgLease({ db, name: 'leader-p', holder: 'p', ttlMs: 60_000 });
    expect(await lease.tryAcquire()).toBe(true);
    const fence = { lease: 'leader-p', token: lease.token ?? 0 };
    const raw = new PgScheduleFires(db, 'p', { everyMs: Number.POSITIVE_INFINITY });
    const warnings: string[] = [];
    const fires = new PgScheduleFires(db, 'p', {
      keepMs: 24 * HOUR,
      everyMs: 0,
      warn: (l) => warnings.push(l),
    });
    const ago = (hours: number) => new Date(Date.now() - hours * HOUR);
    await db.query('DELETE FROM trellis_schedule_fires');
    await raw.claim('prune-a', ago(50));
    await raw.claim('prune-a', ago(30));
    await raw.claim('prune-b', ago(2));
    expect(await fires.claimFenced('prune-c', ago(1), fence)).toBe('claimed');
    expect(await firesNamed()).toEqual(['prune-b', 'prune-c']);
    // when every fire is old, the newest of all stays: a new leader resumes from it
    await db.query('DELETE FROM trellis_schedule_fires');
    await raw.claim('prune-d', ago(60));
    expect(await fires.claimFenced('prune-e', ago(40), fence)).toBe('claimed');
    expect(await firesNamed()).toEqual(['prune-e']);
    expect(warnings).toEqual([]);
  });
});

const HOUR = 3_600_000;
const firesNamed = async (): Promise<string[]> =>
  (
    await db.query<{ dag_name: string }>(
      'SELECT dag_name FROM trellis_schedule_fires ORDER BY fire_at',
    )
  ).rows.map((r) => r.dag_name);
