import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { PgDb } from '../db/pg-db.js';
import { migrate } from '../migrate/migrations.js';
import { PgLease } from './pg-lease.js';
import { PgScheduleFires } from './schedule-fires.js';

let pg: PrivatePostgres;
let db: PgDb;
beforeAll(async () => {
  pg = await startPostgres();
  db = new PgDb({ url: pg.url, poolSize: 4 });
  await migrate(db);
});
afterAll(async () => {
  await db.end();
  await pg.stop();
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
  });
});
