import { beforeAll, describe, expect, it } from 'vitest';
import { RunStatus, systemClock } from '@trellis/core';
import { currentOwner } from '@trellis/store';
import { makeRunRecord } from '@trellis/testkit';
import type { Dag, DagRunRecord, RunOwner } from '@trellis/spec';
import type { PgDb } from '../db/pg-db.js';
import { useMigratedPg } from '../../test/support/migrated-pg.js';
import { PgRunStore } from '../runs/pg-run-store.js';
import { InstanceHeartbeat, type InstanceLiveness } from './instance-heartbeat.js';

const pools = useMigratedPg({ pools: 1, database: 'liveness' });
let url: string;
let db: PgDb;
beforeAll(() => {
  url = pools.url();
  db = pools.db(0);
});

const STALE_MS = 60_000;
/** An instance on another host, which the pid probe cannot judge. */
const remote = (pid: number): RunOwner => ({
  host: 'another-host.example',
  pid,
  processStart: '2026-01-01T00:00:00.000Z',
  workerId: 'local',
});

const running = (id: string, owner: RunOwner): DagRunRecord => {
  const r = makeRunRecord({ name: 'etl', params: [] } as unknown as Dag, id);
  return { ...r, status: RunStatus.Running, owner };
};

/** A heartbeat row as another instance writes it, `agoMs` ago by the database's clock. */
const beatAs = async (o: RunOwner, agoMs: number): Promise<void> => {
  await db.query(
    `INSERT INTO trellis_instances (host, pid, process_start, last_seen)
     VALUES ($1, $2, $3, now() - $4 * interval '1 millisecond')
     ON CONFLICT (host, pid, process_start) DO UPDATE SET last_seen = EXCLUDED.last_seen`,
    [o.host, o.pid, o.processStart, agoMs],
  );
};

const storeJudging = (judge: boolean): PgRunStore => {
  const liveness: InstanceLiveness = { staleAfterMs: STALE_MS, canJudge: () => judge };
  return new PgRunStore({ db, logDir: '/var/trellis/logs', clock: systemClock, liveness });
};

const orphanIds = async (s: PgRunStore): Promise<string[]> =>
  (await s.findOrphanedRuns()).map((r) => r.dagRunId).sort();

describe('lost-run recovery by instance heartbeats (PostgreSQL store)', () => {
  it('finds the runs of an owner on another host once its heartbeat is older than the bound', async () => {
    const [fresh, stale, never] = [remote(101), remote(102), remote(103)];
    const store = storeJudging(true);
    const snapshot = { dag: {}, localDags: [] };
    await store.createRun(running('fresh-run', fresh), snapshot);
    await store.createRun(running('stale-run', stale), snapshot);
    await store.createRun(running('never-run', never), snapshot);
    // a run on a worker is the coordinator's to judge, whatever the rows say
    await store.createRun(running('worker-run', { ...never, workerId: 'gpu-1' }), snapshot);
    await beatAs(fresh, 1000);
    await beatAs(stale, STALE_MS + 5000);
    // an owner with no row (a process of a version before instance liveness, in a rolling
    // upgrade) is not judged by heartbeats: only the pid probe, on its own host, can judge it
    expect(await orphanIds(store)).toEqual(['stale-run']);
    // the stale owner beats again (it was only slow): its run is no longer lost
    await beatAs(stale, 0);
    expect(await orphanIds(store)).toEqual([]);
    // a process whose own beats are not steady judges nobody by heartbeats
    expect(await orphanIds(storeJudging(false))).toEqual([]);
    // the pid probe still applies on this host: an owner pid that is not running is lost
    const gone: RunOwner = { ...currentOwner(), pid: 2 ** 22 + 7 };
    await beatAs(gone, 0);
    await store.createRun(running('dead-pid-run', gone), snapshot);
    expect(await orphanIds(storeJudging(false))).toEqual(['dead-pid-run']);
  });
});

describe('InstanceHeartbeat', () => {
  it('writes its row at start, keeps it fresh, judges only after a steady streak, and deletes it at stop', async () => {
    const self = remote(201);
    const hb = new InstanceHeartbeat({ url, self, everyMs: 50, staleAfterMs: 600 });
    const lastSeen = async (): Promise<number | undefined> => {
      const r = await db.query<{ age: number }>(
        `SELECT extract(epoch FROM now() - last_seen) * 1000 AS age FROM trellis_instances
         WHERE host = $1 AND pid = $2`,
        [self.host, self.pid],
      );
      return r.rows[0] === undefined ? undefined : Number(r.rows[0].age);
    };
    await hb.start();
    expect(await lastSeen()).toBeDefined();
    expect(hb.canJudge()).toBe(false); // no streak as long as the bound yet
    // beats keep landing: the streak reaches the bound, and the row is never older than a gap
    await expect.poll(() => hb.canJudge(), { timeout: 10_000, interval: 50 }).toBe(true);
    expect(await lastSeen()).toBeLessThan(600);
    await hb.stop();
    expect(await lastSeen()).toBeUndefined();
  });
});
