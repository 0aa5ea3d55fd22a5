import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { PgDb } from '../db/pg-db.js';
import { migrate } from '../migrate/migrations.js';
import { PgSuspendFlags } from './pg-suspend-flags.js';

let pg: PrivatePostgres;
let url: string;
/** Two instances: each its own pool and its own flags object, as two processes have. */
let dbA: PgDb;
let dbB: PgDb;
let a: PgSuspendFlags;
let b: PgSuspendFlags;
beforeAll(async () => {
  pg = await startPostgres();
  url = await pg.createDatabase('suspend_flags');
  dbA = new PgDb({ url, poolSize: 2 });
  dbB = new PgDb({ url, poolSize: 2 });
  await migrate(dbA);
  a = await PgSuspendFlags.open({ db: dbA, url });
  // a long safety-net period: what instance B sees within the test came by notification
  b = await PgSuspendFlags.open({ db: dbB, url, refreshMs: 3_600_000 });
});
afterAll(async () => {
  await a.stop();
  await b.stop();
  await dbA.end();
  await dbB.end();
  await pg.stop();
});

/** Polling bound for another instance's view (a bound on a loaded machine, not a figure). */
const SEEN = { timeout: 10_000 };
/** Resolves once `cond` holds on an awaited poll (no fixed sleep). */
const until = (cond: () => boolean): Promise<void> => expect.poll(cond, SEEN).toBe(true);

describe('PgSuspendFlags', () => {
  it('sees its own write at once and another instance sees it by notification', async () => {
    await a.set('etl', true);
    expect(a.has('etl')).toBe(true);
    await until(() => b.has('etl'));
    expect([...b.names()]).toEqual(['etl']);
  });

  it('moves the flag with a rename, on both instances', async () => {
    await a.set('stale', true);
    await b.move('etl', 'etl-v2');
    expect(b.has('etl')).toBe(false);
    expect(b.has('etl-v2')).toBe(true);
    await until(() => a.has('etl-v2') && !a.has('etl'));
    expect(a.has('stale')).toBe(true);
  });

  it('a rename of an unsuspended file clears a stale flag of the new name', async () => {
    await b.move('not-suspended', 'stale');
    expect(b.has('stale')).toBe(false);
    await until(() => !a.has('stale'));
  });

  it('unsuspends, and a set twice is one flag', async () => {
    await b.set('etl-v2', true);
    await b.set('etl-v2', false);
    expect(b.has('etl-v2')).toBe(false);
    await until(() => !a.has('etl-v2'));
    expect(a.names().size).toBe(0);
  });

  it('a third instance opening later loads the flags before its first answer', async () => {
    await a.set('nightly', true);
    const c = await PgSuspendFlags.open({ db: dbB, url });
    try {
      expect([...c.names()]).toEqual(['nightly']);
    } finally {
      await c.stop();
    }
  });

  it('a change written outside Trellis (psql) is seen through the trigger', async () => {
    await dbA.query('DELETE FROM trellis_dag_suspend_flags');
    await until(() => a.names().size === 0 && b.names().size === 0);
  });

  it('after a database restart, reopens its LISTEN and sees changes again', async () => {
    const warnings: string[] = [];
    const c = await PgSuspendFlags.open({
      db: dbB,
      url,
      refreshMs: 50,
      warn: (m) => warnings.push(m),
    });
    try {
      await pg.pause();
      await pg.resume();
      await a.set('after-restart', true);
      await until(() => c.has('after-restart'));
      expect(warnings.join('\n')).toMatch(/LISTEN connection was lost|could not be re-read/);
      await a.set('after-restart', false);
      await until(() => !c.has('after-restart'));
    } finally {
      await c.stop();
    }
  });
});
