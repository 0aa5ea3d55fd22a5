import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStatus } from '@trellis/core';
import { Coordinator, CoordinatorClient } from '@trellis/coordinator';
import type { DagRunRecord } from '@trellis/spec';
import { FsRunStore } from '@trellis/store';
import { FakeClock } from '@trellis/testkit';
import type { Redis } from 'ioredis';
import { createRedis } from '../remote/redis-connection.js';
import { RedisFleet } from '../remote/redis-fleet.js';
import { startRedis, type PrivateRedis } from '../../test/support/redis-server.js';

/**
 * Two coordinators in this process on one file store and one private redis-server, sharing
 * their workers through `RedisFleet` (docs/ha.md, "Workers across coordinators"); a worker is a
 * gRPC client sending heartbeats to one or the other; a FakeClock ages the heartbeats.
 */
let redis: PrivateRedis;
let home: string;
let clock: FakeClock;
let store: FsRunStore;
let conns: Redis[];
let a: Coordinator;
let b: Coordinator;
let toA: CoordinatorClient;
let toB: CoordinatorClient;

const coordinator = async (): Promise<Coordinator> => {
  const conn = createRedis(redis.url);
  conns.push(conn);
  await new Promise((r) => conn.once('ready', r));
  const c = new Coordinator({
    store,
    clock,
    logDir: join(home, 'logs'),
    port: 0,
    fleet: new RedisFleet(conn, clock),
    // the sweeps are run by the test
    sweepEveryMs: 3_600_000,
    fleetSyncMs: 3_600_000,
  });
  await c.start();
  return c;
};

beforeAll(async () => {
  redis = await startRedis();
  home = mkdtempSync(join(tmpdir(), 'trellis-shared-fleet-'));
  clock = new FakeClock(Date.now());
  store = new FsRunStore({ dataDir: join(home, 'data'), logDir: join(home, 'logs'), clock });
  conns = [];
  a = await coordinator();
  b = await coordinator();
  toA = new CoordinatorClient({ address: `127.0.0.1:${a.port}`, clock });
  toB = new CoordinatorClient({ address: `127.0.0.1:${b.port}`, clock });
});

afterAll(async () => {
  toA.close();
  toB.close();
  await a.stop();
  await b.stop();
  for (const c of conns) c.disconnect();
  await redis.stop();
  rmSync(home, { recursive: true, force: true });
});

const ref = { name: 'job', dagRunId: 'r1' };
const running = (workerId: string): DagRunRecord => ({
  name: 'job',
  dagRunId: 'r1',
  root: ref,
  status: RunStatus.Running,
  createdAt: clock.now().toISOString(),
  queuedAt: '',
  startedAt: clock.now().toISOString(),
  finishedAt: '',
  log: store.runLogPath(ref),
  params: [],
  nodes: [],
  preconditions: [],
  error: '',
  owner: { pid: 1, host: 'h', processStart: '', workerId },
  queue: 'job',
  revision: 1,
});

const beat = async (to: Coordinator, client: CoordinatorClient, id: string, runs = false) => {
  await client.heartbeat({
    workerId: id,
    labels: { pool: id },
    capacity: 2,
    runningTasks: runs ? [{ run: ref, root: ref, parent: null, startedAt: '' }] : [],
    incarnation: 'i1',
    accepting: true,
  });
  await to.heartbeatsSettled();
};

const syncBoth = async (): Promise<void> => {
  await a.syncFleet();
  await b.syncFleet();
  await a.syncFleet();
};

describe('replicated coordinators share their workers through Redis', { timeout: 30_000 }, () => {
  it('reports availability and lists a worker connected only to the other coordinator', async () => {
    await beat(b, toB, 'gpu-1');
    expect(a.availability({ pool: 'gpu-1' })).toBe('no healthy worker has labels pool=gpu-1');
    await syncBoth();
    expect(a.availability({ pool: 'gpu-1' })).toBeNull();
    expect(a.workers().map((w) => [w.id, w.health])).toEqual([['gpu-1', 'healthy']]);
  });

  it('keeps the runs of a worker that moved from one to the other, and loses them once no one hears it', async () => {
    await store.createRun(running('mover'), { dag: { name: 'job', steps: [] }, localDags: [] });
    await beat(a, toA, 'mover', true); // a adopts the run from the store
    // It moves to b and beats there for longer than the lost-worker threshold.
    for (let i = 0; i < 16; i++) {
      await clock.advanceBy(1_000);
      await beat(b, toB, 'mover', true);
      await syncBoth();
    }
    await a.sweepLostWorkers();
    await b.sweepLostWorkers();
    expect((await store.getRun(ref)).status).toBe(RunStatus.Running);
    expect(a.workers().find((w) => w.id === 'mover')?.health).toBe('healthy');
    // Heard by no one for the threshold: lost, its run failed naming it.
    await clock.advanceBy(16_000);
    await syncBoth();
    await a.sweepLostWorkers();
    await b.sweepLostWorkers();
    const lost = await store.getRun(ref);
    expect(lost.status).toBe(RunStatus.Failed);
    expect(lost.error).toMatch(/^worker "mover" was lost: no heartbeat since/);
  });
});
