import { beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import type { Dag } from '@trellis/spec';
import { makeRunRecord } from '@trellis/testkit';
import type { PgDb } from '../db/pg-db.js';
import { useMigratedPg } from '../../test/support/migrated-pg.js';
import { PgRunStore } from '../runs/pg-run-store.js';
import { fencedDb, FencedWriteError } from './fenced-db.js';
import { PgLease } from './pg-lease.js';

const pools = useMigratedPg({ pools: 1, poolSize: 6 });
let db: PgDb;
beforeAll(() => {
  db = pools.db(0);
});

const DAG = { name: 'etl', params: [] } as unknown as Dag;
const SNAPSHOT = { dag: { name: 'etl' }, localDags: [] };

/** Lease `name` held by `a`, then expired and taken by `b` (as when `a` was frozen past it). */
const deposed = async (name: string): Promise<{ a: PgLease; b: PgLease; stale: number }> => {
  const a = new PgLease({ db, name, holder: 'a', ttlMs: 60_000 });
  const b = new PgLease({ db, name, holder: 'b', ttlMs: 60_000 });
  expect(await a.tryAcquire()).toBe(true);
  const stale = a.token ?? 0;
  await db.query(
    "UPDATE trellis_leases SET expires_at = now() - interval '1 second' WHERE name = $1",
    [name],
  );
  expect(await b.tryAcquire()).toBe(true);
  expect(b.token).toBe(stale + 1);
  return { a, b, stale };
};

const storeOver = (d: PgDb): PgRunStore =>
  new PgRunStore({ db: d, logDir: '/var/trellis/logs', clock: systemClock });

describe('fencedDb: a leader write carries the lease token', () => {
  it('lands under the current token; refuses every write under a stale one, changing nothing', async () => {
    const plain = storeOver(db);
    const run = makeRunRecord(DAG, 'fenced-1');
    run.status = RunStatus.Running;
    await plain.createRun(run, SNAPSHOT);
    const a = new PgLease({ db, name: 'lead-1', holder: 'a', ttlMs: 60_000 });
    expect(await a.tryAcquire()).toBe(true);
    let token = a.token;
    const refused: FencedWriteError[] = [];
    const fenced = storeOver(
      fencedDb(db, { lease: 'lead-1', holder: 'a', token: () => token }, (e) => refused.push(e)),
    );
    // the current token: lost-run recovery's save and a queue hand-over's swap land
    await fenced.saveRun({ ...run, revision: 1, error: 'first' });
    expect(await fenced.saveRunIf({ ...run, revision: 2, error: 'second' }, 1)).toBe(true);
    expect((await plain.getRun(run)).error).toBe('second');
    expect(refused).toEqual([]);

    // another instance took the lead: the deposed leader's token is stale
    await db.query("UPDATE trellis_leases SET expires_at = now() - interval '1 second'");
    const b = new PgLease({ db, name: 'lead-1', holder: 'b', ttlMs: 60_000 });
    expect(await b.tryAcquire()).toBe(true);
    const writes: [string, () => Promise<unknown>][] = [
      ['saveRun (lost-run recovery)', () => fenced.saveRun({ ...run, revision: 3, error: 'x' })],
      ['saveRunIf (queue hand-over)', () => fenced.saveRunIf({ ...run, revision: 3 }, 2)],
      ['cleanupAll (retention)', () => fenced.cleanupAll(() => Promise.resolve(0))],
      ['deleteRun', () => fenced.deleteRun(run)],
    ];
    for (const [what, write] of writes)
      await expect(write(), what).rejects.toBeInstanceOf(FencedWriteError);
    expect(refused).toHaveLength(writes.length);
    expect(refused[0]?.message).toMatch(/lease "lead-1" token \d+ is stale/);
    const kept = await plain.getRun(run);
    expect([kept.revision, kept.error]).toEqual([2, 'second']);

    // no token at all (stepped down): refused as well
    token = undefined;
    await expect(fenced.saveRun({ ...run, revision: 4 })).rejects.toThrow(/is not held by it/);
  });

  it("refuses a token older than the lease row's, whichever holder it names", async () => {
    const { a, stale } = await deposed('lead-2');
    expect(a.token).toBe(stale);
    const fenced = storeOver(fencedDb(db, { lease: 'lead-2', holder: 'b', token: () => stale }));
    const run = makeRunRecord(DAG, 'fenced-2');
    await expect(fenced.createRun(run, SNAPSHOT)).rejects.toBeInstanceOf(FencedWriteError);
    await expect(storeOver(db).getRun(run)).rejects.toThrow(/not found/);
  });

  it('holds a take-over back until a fenced write in progress has committed', async () => {
    const a = new PgLease({ db, name: 'lead-3', holder: 'a', ttlMs: 60_000 });
    expect(await a.tryAcquire()).toBe(true);
    const fenced = fencedDb(db, { lease: 'lead-3', holder: 'a', token: () => a.token });
    let finish = (): void => undefined;
    const inTx = new Promise<void>((r) => (finish = r));
    let entered = (): void => undefined;
    const started = new Promise<void>((r) => (entered = r));
    const write = fenced.tx(async () => {
      entered();
      await inTx;
    });
    await started;
    const b = new PgLease({ db, name: 'lead-3', holder: 'b', ttlMs: 1 });
    const takeover = b.tryAcquire();
    // the competing statement waits on the lease row's lock
    await expect
      .poll(async () => {
        const r = await db.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
        );
        return Number(r.rows[0]?.n);
      })
      .toBe(1);
    finish();
    await write;
    expect(await takeover).toBe(false); // still a's lease, unexpired
  });
});
