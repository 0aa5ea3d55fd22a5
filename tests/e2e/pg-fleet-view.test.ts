import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freePort,
  spawnWorker,
  startRedis,
  type PrivateRedis,
  type WorkerProcess,
} from '@trellis/dispatch/testing';
import { startPostgres, type PrivatePostgres } from '@trellis/testkit';
import { roleOf, startPgInstance } from './support/pg-instance.js';
import { callApi, untilFinal, type StartAll } from './support/start-all.js';

/**
 * The shared worker view (issue 20 item 4, docs/ha.md "Workers across coordinators"): two
 * start-all instances on one PostgreSQL and one Redis; a worker connected only to the follower.
 * The leader (the only one running the queue processor) hands a queued run whose DAG has a
 * `workerSelector` on to that worker, and lists it in GET /workers.
 */
let postgres: PrivatePostgres;
let redis: PrivateRedis;
let root: string;
const instances: StartAll[] = [];
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-fleet-'));
  mkdirSync(join(root, 'dags'));
  writeFileSync(
    join(root, 'dags', 'far.yaml'),
    'workerSelector:\n  pool: far\nsteps:\n  - name: s\n    command: echo handed on\n',
  );
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  for (const s of instances) await s.stop().catch(() => undefined);
  await Promise.all([postgres?.stop(), redis?.stop()]);
  rmSync(root, { recursive: true, force: true });
}, 120_000);

const outputs = (): string =>
  [
    ...instances.map((s, i) => `--- start-all ${i + 1}:\n${s.output().slice(-4000)}`),
    `--- worker:\n${worker?.output().slice(-4000) ?? ''}`,
  ].join('\n');

describe('replicated coordinators sharing their workers', () => {
  it('the leader hands a queued run on to a worker connected only to the follower', async () => {
    const databaseUrl = await postgres.createDatabase('trellis_fleet');
    const start = async (n: number, grpcPort: number): Promise<StartAll> => {
      const s = await startPgInstance({
        root,
        n,
        databaseUrl,
        lease: { ttlMs: 2000, renewMs: 500 },
        env: { SVC_REDIS_URL: redis.url },
        args: ['--coordinator-port', String(grpcPort)],
      });
      instances.push(s);
      return s;
    };
    const leader = await start(1, await freePort());
    await expect.poll(() => roleOf(leader), { timeout: 30_000 }).toBe('leader');
    const portB = await freePort();
    const follower = await start(2, portB);
    expect(await roleOf(follower)).toBe('follower');
    worker = await spawnWorker({
      id: 'far-1',
      labels: { pool: 'far' },
      coordinator: `127.0.0.1:${portB}`,
      redisUrl: redis.url,
      home: mkdtempSync(join(root, 'worker-')),
    });
    await worker.waitFor(`coordinator 127.0.0.1:${portB})`);
    // The leader lists the follower's worker once the views are synced.
    await expect
      .poll(
        async () => {
          const r = await callApi(`${leader.url}/api/v2`, 'GET', '/workers');
          return (r.body.workers as { id: string }[] | undefined)?.map((w) => w.id);
        },
        { timeout: 30_000 },
      )
      .toEqual(['far-1']);

    const queued = await callApi(`${leader.url}/api/v2`, 'POST', '/dags/far/enqueue', {});
    expect(queued.status).toBe(200);
    const id = queued.body.dagRunId as string;
    const final = await untilFinal(`${leader.url}/api/v2`, 'far', id, {
      attempts: 3000,
      context: outputs,
    });
    expect(final.status).toBe(4);
    const log = await callApi(`${follower.url}/api/v2`, 'GET', `/dag-runs/far/${id}/steps/s/log`);
    expect(log.body.content).toBe('handed on');
  }, 240_000);
});
