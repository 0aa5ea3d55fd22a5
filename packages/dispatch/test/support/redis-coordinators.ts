import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { Coordinator, CoordinatorClient, type HeartbeatResponse } from '@trellis/coordinator';
import { FsRunStore } from '@trellis/store';
import { FakeClock, startRedis, type PrivateRedis } from '@trellis/testkit';
import type { Redis } from 'ioredis';
import { createRedis } from '../../src/remote/redis-connection.js';
import { RedisFleet } from '../../src/remote/redis-fleet.js';

/** Two coordinators of one test file and the means to drive them (set in `beforeAll`). */
export interface RedisCoordinators {
  redis: PrivateRedis;
  clock: FakeClock;
  store: FsRunStore;
  a: Coordinator;
  b: Coordinator;
  toA: CoordinatorClient;
  toB: CoordinatorClient;
  /** The coordinators' Redis connections. */
  readonly conns: Redis[];
}

/**
 * Two coordinators in this process on one file store and one private redis-server, sharing
 * their workers through `RedisFleet` (docs/ha.md, "Workers across coordinators"); a worker is a
 * gRPC client sending heartbeats to one or the other; a FakeClock ages the heartbeats and the
 * test runs the fleet syncs and sweeps. Registers the file's `beforeAll` and `afterAll`.
 */
export const useRedisCoordinators = (prefix: string): RedisCoordinators => {
  const conns: Redis[] = [];
  const t = { conns } as unknown as RedisCoordinators;
  let home = '';
  const coordinator = async (): Promise<Coordinator> => {
    const conn = createRedis(t.redis.url);
    conns.push(conn);
    await new Promise((r) => conn.once('ready', r));
    const c = new Coordinator({
      store: t.store,
      clock: t.clock,
      logDir: join(home, 'logs'),
      port: 0,
      fleet: new RedisFleet(conn, t.clock),
      // the sweeps and syncs are run by the test
      sweepEveryMs: 3_600_000,
      fleetSyncMs: 3_600_000,
    });
    await c.start();
    return c;
  };
  beforeAll(async () => {
    t.redis = await startRedis();
    home = mkdtempSync(join(tmpdir(), prefix));
    t.clock = new FakeClock(Date.now());
    t.store = new FsRunStore({
      dataDir: join(home, 'data'),
      logDir: join(home, 'logs'),
      clock: t.clock,
    });
    t.a = await coordinator();
    t.b = await coordinator();
    t.toA = new CoordinatorClient({ address: `127.0.0.1:${t.a.port}`, clock: t.clock });
    t.toB = new CoordinatorClient({ address: `127.0.0.1:${t.b.port}`, clock: t.clock });
  });
  afterAll(async () => {
    t.toA.close();
    t.toB.close();
    await t.a.stop();
    await t.b.stop();
    for (const c of conns) c.disconnect();
    await t.redis.stop();
    rmSync(home, { recursive: true, force: true });
  });
  return t;
};

/** A heartbeat of `id` (labels `pool=<id>`, 2 slots) to `to`, and its store work done. */
export const beat = async (
  to: Coordinator,
  client: CoordinatorClient,
  id: string,
  runningTasks: Parameters<CoordinatorClient['heartbeat']>[0]['runningTasks'] = [],
): Promise<HeartbeatResponse> => {
  const reply = await client.heartbeat({
    workerId: id,
    labels: { pool: id },
    capacity: 2,
    runningTasks,
    incarnation: 'i1',
    accepting: true,
  });
  await to.heartbeatsSettled();
  return reply;
};

/** Both publish, then both read. */
export const syncBoth = async ({ a, b }: RedisCoordinators): Promise<void> => {
  await a.syncFleet();
  await b.syncFleet();
  await a.syncFleet();
};
