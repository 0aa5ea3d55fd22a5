import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RESUME_MARK_KEY } from '@trellis/scheduler';
import { FakeClock, startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { sharedDbInstances } from '../../test/support/shared-db-instances.js';
import { PgDb } from '@trellis/store-pg';
import { pgLeadership } from './leader-lease.js';

/** The leader's resume mark is fenced like a claim: refused under a stale token, and counted. */
let pg: PrivatePostgres;
let root: string;
const { runtimes, instance } = sharedDbInstances(() => root);
beforeAll(async () => {
  pg = await startPostgres();
  root = mkdtempSync(join(tmpdir(), 'trellis-leader-lease-'));
  mkdirSync(join(root, 'dags'));
});
afterAll(async () => {
  for (const rt of runtimes) await rt.closeStore();
  await pg.stop();
  rmSync(root, { recursive: true, force: true });
});

it('refuses a resume mark under a stale lease token, and counts it as a fenced write', async () => {
  const url = await pg.createDatabase('leader_lease_mark');
  const lines: string[] = [];
  const rt = await instance(1, url, lines);
  const db = rt.database;
  if (db === undefined) throw new Error('no database');
  const opts = { clock: new FakeClock(Date.now()), onRecordSaved: () => undefined };
  const a = pgLeadership(db, rt.config, (l) => lines.push(l), opts);
  const b = pgLeadership(db, rt.config, (l) => lines.push(l), opts);
  expect(await a.lease.tryAcquire()).toBe(true);
  await a.fires.markResumed(new Date('2026-03-01T10:00:00Z'));
  // a's lease runs out (as when it is frozen) and b takes the lead: a's token is stale
  await db.query("UPDATE trellis_leases SET expires_at = now() - interval '1 second'");
  expect(await b.lease.tryAcquire()).toBe(true);
  await expect(a.fires.markResumed(new Date('2026-03-01T10:05:00Z'))).rejects.toThrow(/refused/);
  expect(a.facts.fencedWrites()).toBe(1);
  expect(lines.some((l) => l.includes('the resume mark of cron') && l.includes('refused'))).toBe(
    true,
  );
  const marks = await db.query<{ fire_at: Date }>(
    'SELECT fire_at FROM trellis_schedule_fires WHERE dag_name = $1 ORDER BY fire_at',
    [RESUME_MARK_KEY],
  );
  expect(marks.rows.map((r) => r.fire_at.toISOString())).toEqual(['2026-03-01T10:00:00.000Z']);
  // the new leader's mark is recorded, and counts nothing
  await b.fires.markResumed(new Date('2026-03-01T10:05:00Z'));
  expect(b.facts.fencedWrites()).toBe(0);
  await Promise.all([a.close(), b.close()]); // each lease's own connection
}, 60_000);

it('takes and renews the lease while every connection of the shared pool is busy', async () => {
  const url = await pg.createDatabase('leader_lease_busy');
  const lines: string[] = [];
  const rt = await instance(2, url, lines);
  const shared = rt.database;
  if (shared === undefined) throw new Error('no database');
  // a pool of one connection, held by a query waiting for a lock the test holds
  const busy = new PgDb({ url, poolSize: 1, connectTimeoutMs: 500 });
  const holder = await shared.pool.connect();
  const a = pgLeadership(busy, rt.config, (l) => lines.push(l), {
    clock: new FakeClock(Date.now()),
    onRecordSaved: () => undefined,
  });
  try {
    await holder.query('SELECT pg_advisory_lock(4245)');
    const blocked = busy.query('SELECT pg_advisory_xact_lock_shared(4245)');
    await expect.poll(() => busy.pool.waitingCount + busy.pool.idleCount).toBe(0);
    expect(busy.pool.totalCount).toBe(1);
    // the lease has its own connection: neither waits for the busy pool (its 500 ms timeout)
    expect(await a.lease.tryAcquire()).toBe(true);
    expect(await a.lease.renew()).toBe(true);
    await holder.query('SELECT pg_advisory_unlock(4245)');
    await blocked;
  } finally {
    holder.release();
    await a.lease.release();
    await a.close();
    await busy.end();
  }
}, 60_000);
