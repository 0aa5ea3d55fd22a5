import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
import { roleOf, startListedInstance } from './support/pg-instance.js';
import { callApi, untilFinal, type StartAll } from './support/start-all.js';

/**
 * The shared worker view (issue 20 item 4, docs/ha.md "Workers across coordinators"): two
 * start-all instances on one PostgreSQL and one Redis; a worker connected only to the follower.
 * The leader (the only one running the queue processor) hands a queued run whose DAG has a
 * `workerSelector` on to that worker, and lists it in GET /workers. A drain asked of the leader
 * is handed on (202) to the follower; the worker finishes its run and exits.
 */
let postgres: PrivatePostgres;
let redis: PrivateRedis;
let root: string;
const instances: StartAll[] = [];
let worker: WorkerProcess | undefined;
let leader: StartAll;
let follower: StartAll;
/** The `hold` DAG's step: it says it started, then waits for this file. */
let release: string;

beforeAll(async () => {
  [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
  root = mkdtempSync(join(tmpdir(), 'trellis-e2e-pg-fleet-'));
  mkdirSync(join(root, 'dags'));
  release = join(root, 'release');
  writeFileSync(
    join(root, 'dags', 'far.yaml'),
    'workerSelector:\n  pool: far\nsteps:\n  - name: s\n    command: echo handed on\n',
  );
  writeFileSync(
    join(root, 'dags', 'hold.yaml'),
    `workerSelector:\n  pool: far\nsteps:\n  - name: s\n    command: sh -c 'touch ${root}/held; while [ ! -e ${release} ]; do sleep 0.05; done; echo drained after'\n`,
  );
}, 120_000);

/**
 * The leader, the follower and the worker connected to the follower only: started by the first
 * test that needs them (expect.poll works inside tests only), shared by the next.
 */
const startCluster = async (): Promise<void> => {
  const databaseUrl = await postgres.createDatabase('trellis_fleet');
  const start = (n: number, grpcPort: number): Promise<StartAll> =>
    startListedInstance(instances, { root, databaseUrl, n, redisUrl: redis.url, grpcPort });
  leader = await start(1, await freePort());
  await expect.poll(() => roleOf(leader), { timeout: 30_000 }).toBe('leader');
  const portB = await freePort();
  follower = await start(2, portB);
  expect(await roleOf(follower)).toBe('follower');
  worker = await spawnWorker({
    id: 'far-1',
    labels: { pool: 'far' },
    coordinator: `127.0.0.1:${portB}`,
    redisUrl: redis.url,
    home: mkdtempSync(join(root, 'worker-')),
  });
  await worker.waitFor(`coordinator 127.0.0.1:${portB})`);
};
let cluster: Promise<void> | undefined;
const up = (): Promise<void> => (cluster ??= startCluster());

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

/** The workers an instance lists, with their state. */
const workersOf = async (s: StartAll): Promise<{ id: string; state: string }[] | undefined> =>
  (await callApi(`${s.url}/api/v2`, 'GET', '/workers')).body.workers as
    { id: string; state: string }[] | undefined;

describe('replicated coordinators sharing their workers', () => {
  it('the leader hands a queued run on to a worker connected only to the follower', async () => {
    await up();
    // The leader lists the follower's worker once the views are synced.
    await expect
      .poll(async () => (await workersOf(leader))?.map((w) => w.id), { timeout: 30_000 })
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

  it('a drain asked of the leader reaches the worker: it finishes its run, then exits', async () => {
    await up();
    const started = await callApi(`${leader.url}/api/v2`, 'POST', '/dags/hold/start', {});
    expect(started.status).toBe(200);
    const id = started.body.dagRunId as string;
    await expect.poll(() => existsSync(join(root, 'held')), { timeout: 60_000 }).toBe(true);

    const drain = await callApi(`${leader.url}/api/v2`, 'POST', '/workers/far-1/drain', {});
    expect(drain.status).toBe(202);
    expect(drain.body).toMatchObject({ id: 'far-1', state: 'draining' });
    // Applied by the follower at its next sync: the worker stops taking runs, its run goes on.
    await expect
      .poll(async () => (await workersOf(follower))?.find((w) => w.id === 'far-1')?.state, {
        timeout: 30_000,
      })
      .toBe('draining');
    const proc = worker!.proc;
    expect(proc.exitCode).toBeNull();

    const exited = once(proc, 'exit');
    writeFileSync(release, '');
    const final = await untilFinal(`${leader.url}/api/v2`, 'hold', id, {
      attempts: 3000,
      context: outputs,
    });
    expect(final.status).toBe(4);
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    await expect
      .poll(async () => (await workersOf(leader))?.map((w) => w.id), { timeout: 30_000 })
      .toEqual([]);
  }, 240_000);
});
