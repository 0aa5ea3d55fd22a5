import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { PgDb } from './pg-db.js';

/**
 * The pool's size (`database.poolSize`, issue 20 item 2): more queries than connections wait for
 * one; the server never sees more than `poolSize` connections from the pool.
 */
let pg: PrivatePostgres;
let admin: PgDb;

const LOCK = 4242;
const POOL_SIZE = 3;
const APP = 'trellis_pool_cap';

beforeAll(async () => {
  pg = await startPostgres();
  admin = new PgDb({ url: pg.url, poolSize: 2 });
});
afterAll(async () => {
  await admin.end();
  await pg.stop();
});

/** The server's connections opened by the pool under test (its `application_name`). */
const serverConnections = async (): Promise<number> => {
  const r = await admin.query<{ n: string }>(
    'SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1',
    [APP],
  );
  return Number(r.rows[0]?.n);
};

/** Queries of the pool under test blocked on the lock the test holds. */
const blockedOnLock = async (): Promise<number> => {
  const r = await admin.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_locks l JOIN pg_stat_activity a USING (pid)
      WHERE a.application_name = $1 AND l.locktype = 'advisory' AND NOT l.granted`,
    [APP],
  );
  return Number(r.rows[0]?.n);
};

describe('PgDb pool size', () => {
  it(`opens at most poolSize connections while ${POOL_SIZE + 2} queries run at once`, async () => {
    const db = new PgDb({ url: `${pg.url}?application_name=${APP}`, poolSize: POOL_SIZE });
    const holder = await admin.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [LOCK]);
      // each query waits for the test's lock, holding its connection until the lock is let go
      const queries = Array.from({ length: POOL_SIZE + 2 }, (_, i) =>
        db.query<{ i: number }>('SELECT pg_advisory_xact_lock_shared($1), $2::int AS i', [LOCK, i]),
      );
      await expect.poll(blockedOnLock).toBe(POOL_SIZE);
      expect(db.pool.waitingCount).toBe(2);
      expect(db.pool.totalCount).toBe(POOL_SIZE);
      expect(await serverConnections()).toBe(POOL_SIZE);

      await holder.query('SELECT pg_advisory_unlock($1)', [LOCK]);
      const answers = await Promise.all(queries);
      expect(answers.map((a) => a.rows[0]?.i)).toEqual([0, 1, 2, 3, 4]);
      expect(db.pool.waitingCount).toBe(0);
      expect(db.pool.totalCount).toBe(POOL_SIZE); // kept open, idle, for the next queries
      expect(await serverConnections()).toBe(POOL_SIZE);
    } finally {
      holder.release();
      await db.end();
    }
  });
});

/**
 * A steady load on `db`: `n` callers each making short queries (50 ms on the server) one after
 * the other, `rounds` times or until `stop()`: the pool's queue stays `n - poolSize` deep while
 * the server answers.
 */
const steadyLoad = (db: PgDb, n: number, rounds = Infinity) => {
  let stopped = false;
  const done = Promise.all(
    Array.from({ length: n }, async () => {
      for (let i = 0; i < rounds && !stopped; i++)
        // the load's own calls wait behind each other too: a busy error of theirs is not the test's
        await db.query('SELECT pg_sleep(0.05)').catch(() => undefined);
    }),
  );
  return { done, stop: () => void (stopped = true) };
};

describe('PgDb: a busy pool (every connection in use, the server answering)', () => {
  it('keeps a call waiting past the connect timeout while the server answers the others', async () => {
    const db = new PgDb({
      url: `${pg.url}?application_name=${APP}_busy`,
      poolSize: 1,
      connectTimeoutMs: 300,
    });
    // twelve callers, three rounds each: the call below waits behind ~600 ms of queries at
    // each try (longer than the connect timeout) and ~1.8 s in all
    const load = steadyLoad(db, 12, 3);
    try {
      await expect.poll(() => db.pool.waitingCount).toBe(11);
      const call = await db.query<{ one: number }>('SELECT 1 AS one');
      expect(call.rows[0]?.one).toBe(1);
    } finally {
      load.stop();
      await load.done;
      await db.end();
    }
  });

  it('fails after busyWaitMs, naming the pool size and SVC_DATABASE_POOL_SIZE', async () => {
    const db = new PgDb({
      url: `${pg.url}?application_name=${APP}_busy`,
      poolSize: 1,
      connectTimeoutMs: 300,
      busyWaitMs: 1000,
    });
    const load = steadyLoad(db, 12);
    try {
      await expect.poll(() => db.pool.waitingCount).toBe(11);
      const error = await db.query('SELECT 1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'service_unavailable' });
      expect((error as Error).message).toMatch(
        /busy: a call waited \d+ s for one of the pool's 1 connections.*raise SVC_DATABASE_POOL_SIZE \(now 1\)/,
      );
    } finally {
      load.stop();
      await load.done;
      await db.end();
    }
  });
});
