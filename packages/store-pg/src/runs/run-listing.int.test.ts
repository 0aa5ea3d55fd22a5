import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { makeRunRecord, startPostgres, type PrivatePostgres } from '@trellis/testkit';
import type { Dag, DagRunRecord } from '@trellis/spec';
import { PgDb } from '../db/pg-db.js';
import { migrate } from '../migrate/migrations.js';
import { PgRunStore } from './pg-run-store.js';

let pg: PrivatePostgres;
let n = 0;
const open: PgDb[] = [];

beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await Promise.all(open.map((d) => d.end()));
  await pg.stop();
});

/** A fresh migrated database, and stores over it as separate processes would have them. */
type OpenStore = (maxCachedRuns?: number, warn?: (m: string) => void) => PgRunStore;
const freshDatabase = async (): Promise<{ db: PgDb; store: OpenStore }> => {
  const db = new PgDb({ url: await pg.createDatabase(`listing_${++n}`) });
  open.push(db);
  await migrate(db);
  const store: OpenStore = (maxCachedRuns, warn) => {
    const own = new PgDb({ url: db.pool.options.connectionString as string, poolSize: 2 });
    open.push(own);
    return new PgRunStore({
      db: own,
      logDir: '/var/trellis/logs',
      clock: systemClock,
      ...(maxCachedRuns === undefined ? {} : { maxCachedRuns }),
      ...(warn ? { warn } : {}),
    });
  };
  return { db, store };
};

const snapshot = { dag: {}, localDags: [] };
const run = (id: string, i: number): DagRunRecord =>
  makeRunRecord(
    { name: 'etl', params: [] } as unknown as Dag,
    id,
    new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  );
const ids = async (s: PgRunStore): Promise<string[]> =>
  (await s.listRuns({ name: 'etl' })).map((r) => `${r.dagRunId}:${r.error}`);

describe('the in-memory run listing of the PostgreSQL store', () => {
  it('shows a write committed after a later transaction had committed and been listed', async () => {
    const { db, store } = await freshDatabase();
    const [a, b] = [store(), store()];
    await a.createRun(run('run-1', 1), snapshot);
    await a.createRun(run('run-3', 3), snapshot);
    expect(await ids(a)).toEqual(['run-3:', 'run-1:']);
    // an early transaction changes run-1 and deletes run-3, and is still open ...
    const early = await db.pool.connect();
    try {
      await early.query('BEGIN');
      await early.query(
        `UPDATE trellis_runs SET summary = summary || '{"error":"late"}' WHERE dag_run_id = 'run-1'`,
      );
      await early.query(`DELETE FROM trellis_runs WHERE dag_run_id = 'run-3'`);
      // ... while a later one commits and is listed
      await b.createRun(run('run-2', 2), snapshot);
      expect(await ids(a)).toEqual(['run-3:', 'run-2:', 'run-1:']);
      await early.query('COMMIT');
    } finally {
      early.release();
    }
    expect(await ids(a)).toEqual(['run-2:', 'run-1:late']);
  });

  it('reads the whole history again when deletions it had not read were pruned', async () => {
    const { db, store } = await freshDatabase();
    const [a, b] = [store(), store()];
    for (const [i, id] of ['run-1', 'run-2'].entries())
      await a.createRun({ ...run(id, i), status: RunStatus.Queued }, snapshot);
    expect(await ids(a)).toEqual(['run-2:', 'run-1:']);
    await b.deleteRun({ name: 'etl', dagRunId: 'run-2' });
    await db.query(`UPDATE trellis_runs_gone SET deleted_at = now() - interval '2 hours'`);
    await b.deleteRunsOlderThan('etl', 7); // retention prunes the tombstones
    const left = await db.query<{ n: string }>('SELECT count(*) AS n FROM trellis_runs_gone');
    expect(left.rows[0]?.n).toBe('0');
    expect(await ids(a)).toEqual(['run-1:']);
  });

  it('past its limit of runs in memory, warns and lists from the database', async () => {
    const { store } = await freshDatabase();
    const warnings: string[] = [];
    const a = store(2, (m) => warnings.push(m));
    for (const [i, id] of ['run-1', 'run-2'].entries()) await a.createRun(run(id, i), snapshot);
    expect(await ids(a)).toEqual(['run-2:', 'run-1:']);
    expect(warnings).toEqual([]);
    await store().createRun(run('run-3', 3), snapshot);
    expect(await ids(a)).toEqual(['run-3:', 'run-2:', 'run-1:']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('over 2 runs');
    expect(await ids(a)).toEqual(['run-3:', 'run-2:', 'run-1:']);
  });

  it('warns once, with the fix, when change stamps are ahead of the server (a restore)', async () => {
    const { db, store } = await freshDatabase();
    const warnings: string[] = [];
    const a = store(undefined, (m) => warnings.push(m));
    await a.createRun(run('run-1', 1), snapshot);
    await db.query('UPDATE trellis_runs_gone_floor SET xid = 9000000000000000');
    expect(await ids(a)).toEqual(['run-1:']);
    expect(await ids(a)).toEqual(['run-1:']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('UPDATE trellis_runs SET changed_xid = 0');
    await db.query('UPDATE trellis_runs SET changed_xid = 0');
    await db.query('UPDATE trellis_runs_gone_floor SET xid = 0');
    await a.createRun(run('run-2', 2), snapshot);
    expect(await ids(a)).toEqual(['run-2:', 'run-1:']);
  });
});
